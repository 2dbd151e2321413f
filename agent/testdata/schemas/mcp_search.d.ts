// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoMcpSearchInput {
  /**
   * Search terms
   * @minLength 1
   * @maxLength 256
   */
  query: string;
  /**
   * owner/name
   * @pattern ^[\w.-]+/[\w.-]+$
   */
  repo?: string;
  /** @default "open" */
  state?: "open" | "closed" | "all";
  /**
   * @default 30
   * @minimum 1
   * @maximum 100
   */
  perPage?: number;
  /** @format date-time */
  since?: string;
}

/**
 * A tool.
 *
 * Tool ID: demo.mcp-search
 */
declare function demoMcpSearch(input: DemoMcpSearchInput): unknown;
