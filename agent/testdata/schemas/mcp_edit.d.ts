// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoMcpEditInput {
  /** Path of the file to edit */
  path: string;
  /**
   * Edits applied in order
   * @minItems 1
   */
  edits: {
    /** Text to search for; must match exactly */
    oldText: string;
    /** Text to replace it with */
    newText: string;
  }[];
  /**
   * Show a git-style diff instead of writing
   * @default false
   */
  dryRun?: boolean;
  encoding?: "utf-8" | "latin1";
  /** Where the edits apply */
  target?: {
    kind: "line";
    /** @exclusiveMinimum 0 */
    line: number;
  } | {
    kind: "range";
    start: number;
    end: number;
  };
  meta?: Record<string, string>;
}

/**
 * A tool.
 *
 * Tool ID: demo.mcp-edit
 */
declare function demoMcpEdit(input: DemoMcpEditInput): unknown;
