/**
 * A custom tool and two plugins on the dsh library, runnable offline.
 *
 * - `read_note` and `delete_note` are custom tools whose parameters are zod schemas.
 * - `auditPlugin` listens to a live event (`tools/result`) and counts the calls that ran.
 * - `readOnlyNotes` is a policy on the `tools/pre-execute` waterfall: it denies `delete_note`,
 *   so that call never runs and the model reads a `DENIED` result instead.
 *
 * A scripted model (no network, no key) asks for both tools in one step, then answers. The
 * example prints the model-visible history derived from the log, saves the session as a dsh v0
 * JSONL file, loads it back and checks that the reloaded session derives the same history.
 *
 * Run it: `npm run examples` (compiles examples/ with tsc and runs each with plain node), or
 * npx vitest run test/examples/custom-tool.test.ts   (the test calls `main`)
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import {
  createAgent,
  deepEqual,
  encodeJsonl,
  loadJsonlFile,
  ScriptedAdapter,
  textResponse,
  toolCallResponse,
  type LoadedLog,
  type Message,
  type Plugin,
  type Session,
  type ToolDefinition,
} from 'dsh';

const noteArgs = z.object({ title: z.string().describe('The title of the note') });
type NoteArgs = z.infer<typeof noteArgs>;

/** The app's state (a few notes) and two tools over it. */
function noteTools(notes: Map<string, string>, stats: { reads: number }): ToolDefinition[] {
  // `createAgent({ tools })` takes `ToolDefinition[]` (that is, `ToolDefinition<any>`), so
  // `execute`'s argument is only typed when the definition names its argument type itself.
  const readNote: ToolDefinition<NoteArgs> = {
    name: 'read_note',
    description: 'Read a note by its title.',
    parameters: noteArgs,
    isConcurrencySafe: () => true,
    permission: { effects: 'none' },
    execute: ({ title }) => {
      stats.reads += 1;
      return notes.get(title) ?? `There is no note titled "${title}".`;
    },
  };
  const deleteNote: ToolDefinition<NoteArgs> = {
    name: 'delete_note',
    description: 'Delete a note by its title.',
    parameters: noteArgs,
    execute: ({ title }) => (notes.delete(title) ? `Deleted "${title}".` : `There is no note titled "${title}".`),
  };
  return [readNote, deleteNote];
}

/** Live event: `tools/result` is emitted for each call whose body ran (not for a denied one). */
function auditPlugin(seen: string[]): Plugin {
  return (host) => host.on('tools/result', ({ call, outcome }) => void seen.push(`${call.name} ${outcome.isError ? 'error' : 'ok'}`));
}

/** Waterfall: decide for `delete_note`, pass every other call on down the chain. */
const readOnlyNotes: Plugin = (host) =>
  host.on('tools/pre-execute', (payload, next) =>
    payload.call.name === 'delete_note' ? { kind: 'deny', reason: 'notes are read-only in this app' } : next(payload),
  );

function render(m: Message): string {
  const parts = m.content.map((b) => {
    switch (b.type) {
      case 'text':
        return b.text;
      case 'tool-call':
        return `→ ${b.name}(${b.arguments})`;
      case 'tool-result':
        return `← [${b.toolCallId}]${b.isError ? ' error' : ''} ${b.content.map((c) => (c.type === 'text' ? c.text : c.type)).join(' ')}`;
      default:
        return `(${b.type})`;
    }
  });
  return `${m.role}: ${parts.join(' ')}`;
}

export interface ExampleResult {
  /** The JSONL file the session was saved to. */
  file: string;
  /** Calls the audit plugin saw finish. */
  audited: string[];
  /** How many times `read_note`'s body ran. */
  reads: number;
  /** Whether the note the model tried to delete is still there. */
  groceriesKept: boolean;
  /** The live session and the one loaded back from the file. */
  session: Session;
  reloaded: LoadedLog;
}

export async function main(dir?: string): Promise<ExampleResult> {
  const notes = new Map([
    ['groceries', 'milk, eggs, coffee'],
    ['ideas', 'an agent whose session is a log'],
  ]);
  const stats = { reads: 0 };
  const model = new ScriptedAdapter(
    [
      toolCallResponse(
        [
          { id: 'call_read', name: 'read_note', args: { title: 'groceries' } },
          { id: 'call_delete', name: 'delete_note', args: { title: 'groceries' } },
        ],
        { text: 'Reading the note, then deleting it.' },
      ),
      textResponse('Your groceries note says: milk, eggs, coffee. I could not delete it: notes are read-only here.'),
    ],
    { providers: ['scripted'] },
  );

  const audited: string[] = [];
  const agent = createAgent({
    model: 'scripted:demo', // "provider:model"; the provider must be one the adapters serve
    adapters: model,
    system: 'You manage the user’s notes.',
    tools: noteTools(notes, stats),
    plugins: [auditPlugin(audited), readOnlyNotes],
  });

  agent.prompt('What is on my grocery list? Delete the note afterwards.');
  await agent.whenIdle();
  await agent.dispose();

  // The model-visible history, derived from the log.
  const messages = agent.session.deriveMessages();
  for (const m of messages) console.log(render(m));

  // Save the session as dsh v0 JSONL (`dsh log show FILE` reads it), then load it back.
  const file = join(dir ?? (await mkdtemp(join(tmpdir(), 'dsh-custom-tool-'))), 'session.jsonl');
  await writeFile(file, encodeJsonl(agent.session.header, agent.session.events));
  const reloaded = loadJsonlFile(file);
  const same = deepEqual(reloaded.session.deriveMessages().toArray(), messages.toArray());
  console.log(`saved ${file}: ${reloaded.eventCount} events; reloaded history ${same ? 'matches' : 'DIFFERS'}`);

  return { file, audited, reads: stats.reads, groceriesKept: notes.has('groceries'), session: agent.session, reloaded };
}

// Run directly (npm run examples compiles it to dist-examples/ and runs it with plain node).
if (/custom-tool\.[jt]s$/.test(process.argv[1] ?? '')) await main();
