import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** A Kafka record's headers; a record that belongs to a trace carries `traceparent` and `tracestate`. */
export type RecordHeaders = Readonly<Record<string, string>>;

/** One hop of a send or a delivery: its span, and the headers that make the records it writes its children. */
export interface Hop {
  /** Undefined while tracing is off: no header is written. */
  readonly headers: RecordHeaders | undefined;
  /** Notes the moment a step of the hop is done (an event on its span). */
  mark(step: string): void;
  end(failure?: string): void;
}

export interface HopOptions {
  readonly attributes?: Attributes;
  /** `consumer` unless told: most hops work on a record they read. */
  readonly kind?: keyof typeof kinds;
}

const kinds = { producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER, client: SpanKind.CLIENT } as const;

const EXPORT_TIMEOUT_MS = 5_000;
const off: Hop = { headers: undefined, mark: () => undefined, end: () => undefined };
const propagator = new W3CTraceContextPropagator();
let tracer: Tracer | undefined;

/**
 * Starts exporting spans over OTLP/HTTP to `endpoint` (the collector's base URL; spans go to
 * `/v1/traces`). Without an endpoint nothing is set up and every hop is `off`: no span, no header.
 * The SDK and its exporter are loaded only then: a process that does not trace starts without
 * their few hundred modules.
 */
export async function startTracing(serviceName: string, endpoint: string | undefined): Promise<{ stop(): Promise<void> }> {
  if (endpoint === undefined) return { stop: async () => undefined };
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor, TracerProvider }, { ATTR_SERVICE_NAME }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    // A collector that is down holds up a stopping process by at most EXPORT_TIMEOUT_MS, not the SDK's 30 s.
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces`, timeoutMillis: EXPORT_TIMEOUT_MS }),
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  tracer = provider.getTracer('gateway');
  return {
    async stop() {
      tracer = undefined;
      await provider.shutdown();
    },
  };
}

/** Starts a trace: its first hop, where a send comes in. */
export function startTrace(name: string, options: HopOptions = {}): Hop {
  return tracer === undefined ? off : hop(tracer, name, ROOT_CONTEXT, options);
}

/**
 * Starts the hop of a record read from the log, a child of the hop that wrote it (`headers`, the
 * record's). A record that belongs to no trace (tracing off where it was written) starts none.
 */
export function continueTrace(name: string, headers: RecordHeaders | undefined, options: HopOptions = {}): Hop {
  if (tracer === undefined || headers?.traceparent === undefined) return off;
  return hop(tracer, name, propagator.extract(ROOT_CONTEXT, headers, headerGetter), options);
}

/** Runs `work` as the first hop of a trace, ended when it settles. */
export async function inTrace<T>(name: string, options: HopOptions, work: (hop: Hop) => Promise<T>): Promise<T> {
  const started = startTrace(name, options);
  try {
    const result = await work(started);
    started.end();
    return result;
  } catch (error) {
    started.end(error instanceof Error ? error.message : String(error));
    throw error;
  }
}

function hop(tracer: Tracer, name: string, parent: Context, options: HopOptions): Hop {
  const span: Span = tracer.startSpan(name, { kind: kinds[options.kind ?? 'consumer'], attributes: options.attributes }, parent);
  const headers: Record<string, string> = {};
  propagator.inject(trace.setSpan(parent, span), headers, headerSetter);
  return {
    headers,
    mark: (step) => void span.addEvent(step),
    end(failure) {
      if (failure !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
      span.end();
    },
  };
}

const headerGetter = {
  get: (carrier: RecordHeaders, key: string) => carrier[key],
  keys: (carrier: RecordHeaders) => Object.keys(carrier),
};
const headerSetter = { set: (carrier: Record<string, string>, key: string, value: string) => void (carrier[key] = value) };
