// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoPydanticRefsInput {
  name: string;
  /** @format email */
  email: string;
  address: {
    street: string;
    city: string;
  };
  /** @default "member" */
  role?: "admin" | "member";
  /** @default null */
  nickname?: string | null;
}

/**
 * A tool.
 *
 * Tool ID: demo.pydantic-refs
 */
declare function demoPydanticRefs(input: DemoPydanticRefsInput): unknown;
