// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoBooleanSchemasInput {
  anything?: unknown;
  nothing?: never;
  none?: never;
  op?: "<" | ">=" | "a&b";
}

/**
 * A tool.
 *
 * Tool ID: demo.boolean-schemas
 */
declare function demoBooleanSchemas(input: DemoBooleanSchemasInput): unknown;
