// A first program: TypeScript, run as an ES module in a fresh sandbox.
interface Greeting {
  text: string;
  words: number;
}

const text: string = "hello from the sandbox";
console.log("computing a greeting");

export default {
  text,
  words: text.split(" ").length,
} satisfies Greeting;
