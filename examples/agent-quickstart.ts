/**
 * A complete agent on the dsh library, runnable offline: a scripted model (replace it with a
 * real one, see below) calls a tool, reads the result and answers. Afterwards the session log
 * holds everything, and the model-visible history is derived from it.
 *
 * Run it: `npm run examples` (compiles examples/ with tsc and runs each with plain node), or
 * npx vitest run test/agent/create-agent.test.ts
 */
import { z } from 'zod';
import { createAgent, defineTool, ScriptedAdapter, textResponse, toolCallResponse, encodeJsonl } from 'dsh';

export async function main(): Promise<string> {
  // With a real model: createAgent({ model: 'deepseek:deepseek-v4-flash', ... }) and
  // DEEPSEEK_API_KEY set; the adapter is created for you. Here the model is scripted.
  const model = new ScriptedAdapter(
    [
      toolCallResponse([{ id: 'call_1', name: 'word_count', args: { text: 'the quick brown fox' } }], { text: 'Let me count.' }),
      textResponse('The text has 4 words.'),
    ],
    { providers: ['scripted'] },
  );

  const agent = createAgent({
    model: 'scripted:demo',
    adapters: model,
    system: 'You are a careful assistant. Use tools when they help.',
    tools: [
      // defineTool types `execute`'s arguments from the zod schema.
      defineTool({
        name: 'word_count',
        description: 'Count the words in a text.',
        parameters: z.object({ text: z.string() }),
        isConcurrencySafe: () => true,
        execute: ({ text }) => String(text.split(/\s+/).filter(Boolean).length),
      }),
    ],
  });

  // Live events: follow the agent without reading the log.
  agent.on('agent/status', ({ status }) => console.log(`[status] ${status}`));
  // Durable events: every fact, as it is committed.
  agent.session.subscribe((e) => {
    if (e.type === 'tool/call') console.log(`[log] ${e.type} ${e.data.name} ${e.data.arguments}`);
  });

  agent.prompt('How many words are in "the quick brown fox"?');
  await agent.whenIdle();

  // The history the model saw is derived from the log, never stored beside it.
  for (const m of agent.session.deriveMessages()) {
    const text = m.content
      .map((b) => {
        if (b.type === 'text') return b.text;
        if (b.type === 'tool-call') return `→ ${b.name}(${b.arguments})`;
        if (b.type === 'tool-result') return `← ${JSON.stringify(b.content)}`;
        return b.type;
      })
      .join(' ');
    console.log(`${m.role}: ${text}`);
  }
  // And the whole session is one dsh v0 JSONL log (write it anywhere; `dsh log show` reads it).
  return encodeJsonl(agent.session.header, agent.session.events);
}

if (process.argv[1] && /agent-quickstart\.[jt]s$/.test(process.argv[1])) await main(); // run directly: npm run examples
