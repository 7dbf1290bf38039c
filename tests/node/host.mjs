// A host FlowState did not write: the TypeScript SDK's client drives `flowstate mcp`
// over stdio or streamable HTTP and prints what it read, as JSON, for the pytest side.
//   node host.mjs stdio <flowstate> <namespace> [--read-only]
//   node host.mjs http <url> <token>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, third, flag] = process.argv.slice(2);
const transport =
  mode === "stdio"
    ? new StdioClientTransport({
        command: target,
        args: ["mcp", "-N", third, ...(flag ? [flag] : [])],
        env: process.env,
        stderr: "ignore",
      })
    : new StreamableHTTPClientTransport(new URL(target), {
        requestInit: { headers: { Authorization: `Bearer ${third}` } },
      });

const client = new Client({ name: "flowstate-ts-host", version: "1.0.0" });
await client.connect(transport);
const out = { server: client.getServerVersion(), calls: {} };

const { tools } = await client.listTools();
out.tools = Object.fromEntries(
  tools.map((t) => [
    t.name,
    { annotations: t.annotations, output: Object.keys(t.outputSchema?.properties ?? {}) },
  ]),
);

// The SDK checks each structuredContent against the tool's outputSchema itself.
async function call(name, args) {
  const result = await client.callTool({ name, arguments: args });
  out.calls[name] = out.calls[name] ?? [];
  out.calls[name].push({
    isError: result.isError ?? false,
    structured: result.structuredContent ?? null,
    text: result.content?.[0]?.text ?? "",
  });
  return result;
}

if (flag === "--read-only") {
  await call("memory_index", {});
  await call("memory_search", { query: "window seat" });
} else {
  const fact = await call("memory_remember", {
    summary: "Prefers a window seat on trains",
    category: "preference",
  });
  const stateId = fact.structuredContent.state_id;
  await call("memory_search", { query: "window seat" });
  await call("memory_reveal", { ids: [stateId] });
  const begun = await call("memory_begin", { text: "Book a train to Porto" });
  const rid = begun.structuredContent.request_id;
  const handle = begun.structuredContent.handle;
  await call("memory_reveal", { request_id: rid, handle, ids: [stateId] });
  await call("memory_record", {
    request_id: rid,
    handle,
    delta: [
      {
        op: "add",
        key: "train",
        category: "decision",
        summary: "Window seat booked on the 9:00 to Porto",
        content: "Coach 3, seat 41 (window), as preferred",
        relations: [{ type: "DEPENDS_ON", target: stateId }],
      },
    ],
  });
  await call("memory_record", { request_id: rid, handle, delta: [{ op: "update", key: "nope" }] });
  await call("memory_commit", { request_id: rid, handle, answer: "Booked seat 41", summary: "Train" });
  await call("memory_index", {});
}
await client.close();
process.stdout.write(JSON.stringify(out));
