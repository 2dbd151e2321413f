// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoFormsInput {
  /** x, y */
  point: [number, number];
  row?: [string, ...number[]];
  labels?: {
    color?: string;
    [key: string]: string | undefined;
  };
  both?: {
    a?: string;
  } & {
    b?: number;
  };
  /**
   * @exclusiveMinimum 0
   * @exclusiveMaximum 1
   */
  ratio?: number;
}

/**
 * A tool.
 *
 * Tool ID: demo.forms
 */
declare function demoForms(input: DemoFormsInput): unknown;
