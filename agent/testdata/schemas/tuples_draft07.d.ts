// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoTuplesDraft07Input {
  /** draft-07's tuple */
  legacy?: [string, number];
  rest?: [string, ...number[]];
}

/**
 * A tool.
 *
 * Tool ID: demo.tuples-draft07
 */
declare function demoTuplesDraft07(input: DemoTuplesDraft07Input): unknown;
