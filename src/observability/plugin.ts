/**
 * Live export: an agent plugin that exports each turn's spans when its `turn/end` is appended,
 * and the turn in flight (marked `dsh.incomplete`) when the plugin is disposed. It runs the same
 * `SpanMapper` over the same events as the offline export, so both send identical spans.
 *
 * Spans go to a `SpanExporter`, not through an `@opentelemetry/api` tracer: a tracer mints its
 * own random span ids and expects spans started live, while these are rebuilt from the log with
 * ids derived from it (that is what makes live and offline exports dedupe). A user with an SDK
 * already set up passes the exporter they configured there (`exporter`), so spans reach the same
 * backend with the same resource handling.
 *
 *   const tel = otel({ url: 'http://localhost:4318/v1/traces' });
 *   const agent = createAgent({ model, plugins: [tel] });
 *   …
 *   await agent.dispose();
 *   await tel.shutdown();
 */
import type { Plugin } from '../agent/context.js';
import '../agent/hooks.js';
import { OtelExportError } from './errors.js';
import { checkExporterOptions, openExporter, sendSpans } from './exporter.js';
import { checkMappingOptions, guardRedaction } from './map-session.js';
import { SpanMapper } from './mapper.js';
import { makeResource, toReadableSpan } from './readable.js';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { DshSpan, MappedTurn } from './spans.js';
import type { OtlpExportOptions } from './export.js';

export interface OtelPluginOptions extends OtlpExportOptions {
  /**
   * Where export failures go. Default: the agent's `agent/error` event. A failed turn is not
   * retried later (the log still has it: export it offline).
   */
  onError?: (error: OtelExportError, info: { sessionId: string; turn: number }) => void;
}

export interface OtelPluginStats {
  /** Turns handed to the exporter and accepted. */
  turns: number;
  spans: number;
  /** Turns whose export failed (each reported through `onError`). */
  failures: number;
}

export interface OtelPlugin extends Plugin {
  /** Resolves once every turn queued so far has been sent or has failed. */
  flush(): Promise<void>;
  /** `flush`, then shut down the exporter if this plugin created it (from `url`). */
  shutdown(): Promise<void>;
  readonly stats: Readonly<OtelPluginStats>;
}

export function otel(opts: OtelPluginOptions): OtelPlugin {
  checkMappingOptions(opts);
  checkExporterOptions(opts);
  const resource = makeResource(opts);
  const stats: OtelPluginStats = { turns: 0, spans: 0, failures: 0 };
  let opened: { exporter: SpanExporter; owned: boolean } | undefined;
  let queue: Promise<void> = Promise.resolve();
  const url = opts.exporter ? undefined : opts.url;
  const batch: { batchSize?: number; url?: string } = {};
  if (opts.batchSize !== undefined) batch.batchSize = opts.batchSize;
  if (url !== undefined) batch.url = url;

  /** One trace per session: each session's mapper and the turns it exported, for its session span. */
  const sessions: { mapper: SpanMapper; turns: MappedTurn[]; report: (e: OtelExportError, turn: number) => void }[] = [];

  const enqueue = (turn: MappedTurn, report: (e: OtelExportError, turn: number) => void, seen?: MappedTurn[]): void => {
    if (turn.inherited && opts.inherited !== 'include') return;
    seen?.push(turn);
    send(turn.spans, turn.turn, report);
  };

  const send = (dshSpans: readonly DshSpan[], turnNo: number, report: (e: OtelExportError, turn: number) => void): void => {
    const spans = dshSpans.map((s) => toReadableSpan(s, resource));
    const turn = { turn: turnNo };
    queue = queue.then(async () => {
      try {
        opened ??= openExporter(opts);
        await sendSpans(opened.exporter, spans, batch);
        stats.turns++;
        stats.spans += spans.length;
      } catch (e) {
        stats.failures++;
        report(e instanceof OtelExportError ? e : new OtelExportError('EXPORT_FAILED', String(e), {}, { cause: e }), turn.turn);
      }
    });
  };

  const plugin: Plugin = (host) => {
    const session = host.session;
    const report = (error: OtelExportError, turn: number): void => {
      if (opts.onError) opts.onError(error, { sessionId: session.id, turn });
      else host.agent.bus.emit('agent/error', { agent: host.agent, turn, step: 0, error });
    };
    const mapper = new SpanMapper({ id: session.id, header: session.header }, opts);
    const exported: MappedTurn[] = [];
    if (opts.traces === 'session') sessions.push({ mapper, turns: exported, report });
    const push = (e: Parameters<SpanMapper['push']>[0]): MappedTurn[] => {
      try {
        return guardRedaction(() => mapper.push(e));
      } catch (err) {
        report(err as OtelExportError, session.trace.openTurn ?? session.trace.lastTurn);
        return [];
      }
    };
    // Turns already in the log (a resumed session) only set the mapper's state: they were
    // exported by the run that wrote them, or can be exported offline.
    for (let i = 0; i < session.length; i++) push(session.at(i)!);
    const unsubscribe = session.subscribe((e) => {
      for (const t of push(e)) enqueue(t, report, exported);
    });
    return () => {
      unsubscribe();
      let open: MappedTurn | undefined;
      try {
        open = guardRedaction(() => mapper.openTurn());
      } catch (err) {
        report(err as OtelExportError, session.trace.openTurn ?? session.trace.lastTurn);
      }
      if (open) enqueue(open, report, exported);
    };
  };

  const flush = async (): Promise<void> => {
    // Turns queued while we waited are waited for too.
    let seen: Promise<void> | undefined;
    while (seen !== queue) {
      seen = queue;
      await seen;
    }
    await opened?.exporter.forceFlush?.();
  };
  const shutdown = async (): Promise<void> => {
    // One trace per session: each session's span, over the turns this plugin exported, goes last
    // (its end is only known now). An offline export of the log sends the same span id.
    for (const s of sessions.splice(0)) {
      let root: DshSpan | undefined;
      try {
        root = guardRedaction(() => s.mapper.sessionSpan(s.turns));
      } catch (err) {
        s.report(err as OtelExportError, s.turns.at(-1)?.turn ?? 0);
      }
      if (root) send([root], s.turns.at(-1)?.turn ?? 0, s.report);
    }
    await flush();
    if (opened?.owned) await opened.exporter.shutdown().catch(() => undefined);
    opened = undefined;
  };
  return Object.assign(plugin, { flush, shutdown, stats });
}
