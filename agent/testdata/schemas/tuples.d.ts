// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoTuplesInput {
  /** pydantic's tuple[float, float] */
  pair: [number, number];
  head?: [string, boolean?];
  open?: [string, ...number[]];
}

/**
 * A tool.
 *
 * Tool ID: demo.tuples
 */
declare function demoTuples(input: DemoTuplesInput): unknown;
