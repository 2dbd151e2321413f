// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface DemoIndexSignatureInput {
  headers?: {
    accept?: string;
    [key: string]: string | undefined;
  };
  labels?: {
    count?: number;
    [key: string]: unknown; // more properties: string
  };
  extra?: {
    id?: string;
    [key: string]: unknown;
  };
}

/**
 * A tool.
 *
 * Tool ID: demo.index-signature
 */
declare function demoIndexSignature(input: DemoIndexSignatureInput): unknown;
