// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoOpenapiNullableInput {
  name?: string | null;
  tags?: string[] | null;
  status?: "a" | "b" | null;
  /** A user. */
  owner?: {
    login?: string;
  } | null;
}

/**
 * A tool.
 *
 * Tool ID: demo.openapi-nullable
 */
declare function demoOpenapiNullable(input: DemoOpenapiNullableInput): unknown;
