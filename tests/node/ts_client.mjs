// A client on the official TypeScript SDK's unstable v1 entry, whose app API validates every
// incoming message against the SDK's zod schemas. It runs one prompt against the agent
// command given on the command line and prints a JSON report on stdout:
// the session/update notifications seen on the wire and those that passed validation.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";

const [, , cwd, command, ...args] = process.argv;
const child = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });

const onWire = [];
let pending = "";
const tee = new TransformStream({
  transform(chunk, controller) {
    pending += new TextDecoder().decode(chunk);
    const lines = pending.split("\n");
    pending = lines.pop();
    for (const line of lines) {
      if (line.trim()) {
        const message = JSON.parse(line);
        if (message.method === "session/update") onWire.push(message.params);
      }
    }
    controller.enqueue(chunk);
  },
});
const input = Readable.toWeb(child.stdout).pipeThrough(tee);
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), input);

const validated = [];
const app = acp
  .client({ name: "llm-plans-interop" })
  .onNotification(acp.methods.client.session.update, (ctx) => {
    validated.push(ctx.params);
  })
  .onRequest(acp.methods.client.session.requestPermission, () => ({
    outcome: { outcome: "selected", optionId: "allow" },
  }));

const stopReason = await app.connectWith(stream, async (ctx) => {
  await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: JSON.parse(process.env.ACP_CLIENT_CAPABILITIES ?? "{\"plan\": {}}"),
  });
  const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const response = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Fix calc.mean" }],
  });
  return response.stopReason;
});
child.kill();
process.stdout.write(JSON.stringify({ stopReason, onWire, validated }) + "\n");
process.exit(0);
