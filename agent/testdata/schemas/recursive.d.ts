// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoRecursiveInput {
  tree: DemoRecursiveInputNode;
}

type DemoRecursiveInputNode = {
  value: number;
  children?: DemoRecursiveInputNode[];
};

/**
 * A tool.
 *
 * Tool ID: demo.recursive
 */
declare function demoRecursive(input: DemoRecursiveInput): unknown;
