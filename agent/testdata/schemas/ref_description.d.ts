// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoRefDescriptionInput {
  /** A postal address. */
  home: {
    city: string;
  };
  /** A postal address. */
  work?: {
    city: string;
  } | null;
  /** A postal address. */
  billing?: {
    city: string;
  };
  /** Where parcels go. */
  shipping?: {
    city: string;
  };
}

/**
 * A tool.
 *
 * Tool ID: demo.ref-description
 */
declare function demoRefDescription(input: DemoRefDescriptionInput): unknown;
