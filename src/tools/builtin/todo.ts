/** `todo_write`: the whole task list, every call; the log keeps it as `todo/write`. */
import { builtinParameters } from './parameters.js';
import type { TodoWriteArgs } from './schemas.js';
import type { ToolDefinition } from '../types.js';

export function todoWriteTool(): ToolDefinition<TodoWriteArgs> {
  return {
    name: 'todo_write',
    description:
      'Record and update a structured task list for the current work. Send the ENTIRE list every call: it REPLACES the previous ' +
      'list. Mark a todo in_progress while working on it and completed the moment it is done. Skip the list for trivial ' +
      'single-step tasks.',
    parameters: builtinParameters('todo_write'),
    permission: { effects: 'none' },
    execute(args, ctx) {
      // Only the two fields dsh logs: extra keys a model adds (e.g. activeForm) are dropped.
      const todos = args.todos.map((t) => ({ content: t.content, status: t.status }));
      ctx.session.append('todo/write', { todos });
      const count = (s: string): number => todos.filter((t) => t.status === s).length;
      return `Updated todo list: ${count('pending')} pending, ${count('in_progress')} in progress, ${count('completed')} completed.`;
    },
  };
}
