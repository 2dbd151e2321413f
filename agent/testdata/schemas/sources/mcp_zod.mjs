// Writes the input schema of an MCP file-editing tool as the MCP
// TypeScript SDK lists it (zod 3 + zod-to-json-schema, the SDK's path).
// Usage: npm install --no-save zod@3 zod-to-json-schema@3
//        node sources/mcp_zod.mjs > mcp_edit.json
import { z } from "zod";
import { zodToJsonSchema } from "zod-to-json-schema";
const Edit = z.object({
  oldText: z.string().describe("Text to search for; must match exactly"),
  newText: z.string().describe("Text to replace it with"),
});
const Args = z.object({
  path: z.string().describe("Path of the file to edit"),
  edits: z.array(Edit).min(1).describe("Edits applied in order"),
  dryRun: z.boolean().default(false).describe("Show a git-style diff instead of writing"),
  encoding: z.enum(["utf-8", "latin1"]).optional(),
  target: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("line"), line: z.number().int().positive() }),
    z.object({ kind: z.literal("range"), start: z.number().int(), end: z.number().int() }),
  ]).optional().describe("Where the edits apply"),
  meta: z.record(z.string()).optional(),
});
process.stdout.write(JSON.stringify(zodToJsonSchema(Args, { strictUnions: true }), null, 1) + "\n");
