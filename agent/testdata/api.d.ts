// The functions of the sandbox. Tools and helpers return their values
// directly; `await` works too.

interface CrmSearchContactsInput {
  /** Free text matched against names */
  query: string;
  tags?: string[];
  /** At most this many results */
  limit?: number;
  status?: "active" | "archived";
  /** Exact matches on custom fields */
  filters?: Record<string, string | number>;
  /** ISO date *\/ with a comment end */
  "created-after"?: string;
}

type CrmSearchContactsOutput = {
  email?: string | null;
  id: string;
  name: string;
  owner?: string | {
    team?: string;
  };
}[];

/**
 * Search contacts by name or tag.
 * Results are sorted by relevance.
 *
 * Tool ID: crm.search-contacts
 */
declare function crmSearchContacts(input: CrmSearchContactsInput): CrmSearchContactsOutput;

interface TodoCreateInput {
  title: string;
}

interface TodoCreateOutput {
  id: number;
  title: string;
}

/**
 * Create a todo item
 *
 * Tool ID: todo.create
 */
declare function todoCreate(input: TodoCreateInput): TodoCreateOutput;

type TodoListInput = Record<string, never>;

type TodoListOutput = null | {
  id: number;
  title: string;
}[];

/**
 * List all todos
 *
 * Tool ID: todo.list
 */
declare function todoList(input: TodoListInput): TodoListOutput;

interface WeatherGetWeatherInput {
  /** degrees north */
  latitude: number;
  /** degrees east */
  longitude: number;
}

interface WeatherGetWeatherOutput {
  temperature: number;
  description: string;
}

/**
 * Get current weather
 *
 * Tool ID: weather.get-weather
 */
declare function weatherGetWeather(input: WeatherGetWeatherInput): WeatherGetWeatherOutput;

/** Runs tool calls concurrently, by tool ID. Each slot holds the tool's result, or {error} if that call failed; the other calls are unaffected. */
declare function parallel(calls: { tool: string; input?: unknown }[]): unknown[];

/** Asks the language model for a text completion. */
declare function llm(prompt: string): string;

/** Asks the language model for a JSON object and parses it; a reply that is not JSON is returned as the raw string. */
declare function llmJson(prompt: string): unknown;

/** Returns the JSON Schema of a tool's input. */
declare function toolSchema(toolId: string): object;

/** Answers the user: outputs the response (and the follow-up after it), keeps data for recall("_lastData"), and ends the turn as done() does. */
declare function complete(opts: { response: string; data?: unknown; followUp?: string }): void;

/** Adds a line to the text shown to the user. */
declare function output(...values: unknown[]): void;

/** Marks the task as finished. */
declare function done(): void;

/** Logs a line, as console.log does. */
declare function log(...values: unknown[]): void;

/** Keeps a JSON value for recall() in this and later executions. */
declare function store(key: string, value: unknown): void;

/** Returns what store() kept under key, or undefined. */
declare function recall(key: string): unknown;

/** Stores data as an artifact and returns its ID. */
declare function storeArtifact(data: unknown, description?: string): string;

/** Lists the stored artifacts, without their data. */
declare function listArtifacts(): { id: string; type: string; description: string | null; createdAt: string }[];

/** Returns the data of an artifact. */
declare function getArtifact(id: string): unknown;
