/**
 * The baseline of bench/send: a bare Fastify route that takes the same JSON body and writes the
 * same Avro bytes to Kafka with the same producer settings, without auth, rate limit, idempotency,
 * number choice or validation. Run by bench/send.ts as a child process.
 */
import Fastify from 'fastify';
import { Kafka, Partitioners, logLevel } from 'kafkajs';

const port = Number(process.env.PORT ?? 0);
const topic = process.env.BENCH_TOPIC ?? 'bench.bare';
const size = Number(process.env.BENCH_RECORD_BYTES ?? 300);

const kafka = new Kafka({ brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), logLevel: logLevel.NOTHING });
const producer = kafka.producer({
  idempotent: true,
  maxInFlightRequests: 1,
  retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 5_000 },
  createPartitioner: Partitioners.DefaultPartitioner,
});
await producer.connect();
const bytes = Buffer.alloc(size, 7);
let n = 0;

const app = Fastify();
app.post('/messages/text', async (request, reply) => {
  const body = request.body as { to: string };
  const id = `msg_${n++}`;
  await producer.send({ topic, messages: [{ key: body.to, value: bytes }] });
  return reply.code(202).send({ message_id: id, status: 'queued', client_reference: null });
});
await app.listen({ port, host: '127.0.0.1' });
console.log(JSON.stringify({ port: (app.server.address() as { port: number }).port }));
