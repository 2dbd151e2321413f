declare namespace calcServer {
  /** Add two numbers */
  function add(input: {
    /** the first addend */
    a: number;
    /** the second addend */
    b: number;
  }): Promise<{
    sum: number;
  }>;

  /** Always fails */
  function explode(input: Record<string, never>): Promise<string>;

  /** Greet someone, as text */
  function greetPerson(input: {
    name: string;
  }): Promise<string>;
}
