// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

type DemoPydanticContactInput = {
  /** Full name */
  name: string;
  /** @default null */
  age?: number | null;
  /**
   * A postal address.
   * @default null
   */
  address?: {
    street: string;
    city: string;
    /**
     * ISO 3166 code
     * @default "NO"
     * @minLength 2
     * @maxLength 2
     */
    country?: string;
  } | null;
  /** @default "low" */
  priority?: "low" | "high";
  /** @default "create" */
  mode?: "create" | "upsert";
  channel: {
    /** @default "email" */
    kind?: "email";
    /** @pattern ^[^@]+@[^@]+$ */
    address: string;
  } | {
    /** @default "phone" */
    kind?: "phone";
    number: string;
  };
  /** @default [] */
  tags?: string[];
  /** @default {} */
  extra?: Record<string, number>;
  /**
   * lat, lon
   * @default null
   */
  location?: [number, number] | null;
  /** @default null */
  manager?: DemoPydanticContactInput | null;
};

/**
 * A tool.
 *
 * Tool ID: demo.pydantic-contact
 */
declare function demoPydanticContact(input: DemoPydanticContactInput): unknown;
