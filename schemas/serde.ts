import avro from 'avsc';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { request } from 'undici';
import { composeSchema, unionKinds, type NamedSchema } from './load.js';
import { compileUnionCodec, type UnionCodec } from './unions.js';
import { backoffMs } from '../shared/backoff.js';

const MAGIC_BYTE = 0;
const HEADER_SIZE = 5;
/** The encoder's slab: hundreds of typical records, few enough bytes that a record kept alive long keeps little else. */
const SLAB_BYTES = 64 * 1024;

/** Encodes and decodes one record type in the Confluent wire format: magic byte, schema id, Avro body. */
export interface RecordSerde<T> {
  readonly subject: string;
  readonly schemaId: number;
  encode(value: T): Buffer;
  /**
   * Decodes a record written with any registered version of the schema into the current shape.
   * Synchronous once the writer's schema is known; a promise only while it is fetched.
   */
  decode(buffer: Buffer): T | Promise<T>;
  /**
   * A promise while the schema `buffer` was written with is being fetched, undefined once it is
   * known (or when `buffer` is not in the wire format, which `decodeKnown` then reports).
   */
  ready(buffer: Buffer): Promise<void> | undefined;
  /** `decode` of a record whose writer's schema is known (`ready` answered or settled); a SerdeError otherwise. */
  decodeKnown(buffer: Buffer): T;
}

/** The schema id of a record in the wire format; undefined for bytes that are not. */
function writerIdOf(buffer: Buffer): number | undefined {
  return buffer.length < HEADER_SIZE || buffer.readUInt8(0) !== MAGIC_BYTE ? undefined : buffer.readInt32BE(1);
}

export class SerdeError extends Error {
  override readonly name = 'SerdeError';
}

const REGISTER_TRIES = 6;

/**
 * Registers again when the registry answers 5xx. Registering the same schema is idempotent (it
 * answers the same id), but the registry's client retries only GETs, and a registry on a database
 * (Apicurio on Postgres) can fail a registration that races another process registering the same
 * content at the same moment: the content row is not yet visible to the second insert.
 */
export async function registerAgain<T>(register: () => Promise<T>, tries = REGISTER_TRIES, waitMs = (attempt: number) => backoffMs(attempt, 100, 2_000)): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await register();
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      if (attempt >= tries || typeof status !== 'number' || status < 500) throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs(attempt)));
    }
  }
}

/**
 * The serde side of the schema registry: registers the composed schemas of `schemas/`, then
 * encodes with the current version and decodes any version, resolving older writers to it.
 */
export class AvroSerdes {
  private readonly registry: SchemaRegistry;
  private readonly kinds: ReadonlyMap<string, string>;

  constructor(
    private readonly registryUrl: string,
    private readonly named: ReadonlyMap<string, NamedSchema>,
  ) {
    this.registry = new SchemaRegistry({ host: registryUrl, retry: { retries: 3 } });
    this.kinds = unionKinds(named);
  }

  /** Registers `fullName` under `subject` (BACKWARD compatibility) and returns its serde. */
  async register<T>(subject: string, fullName: string): Promise<RecordSerde<T>> {
    const schema = composeSchema(fullName, this.named);
    const body = { type: SchemaType.AVRO as const, schema: JSON.stringify(schema) };
    const id = (await this.registeredId(subject, body)) ?? (await this.registerNew(subject, body));
    return this.serdeFor<T>(subject, id, avro.Type.forSchema(schema as avro.Schema));
  }

  /**
   * The id of a schema the subject holds already, as on every start but a new version's first: one
   * lookup, where registering asks for the subject's level and has the registry check compatibility.
   * Undefined when it is not there or the lookup failed (registering retries).
   */
  private async registeredId(subject: string, body: { type: SchemaType.AVRO; schema: string }): Promise<number | undefined> {
    try {
      return await this.registry.getRegistryIdBySchema(subject, body);
    } catch {
      return undefined;
    }
  }

  /**
   * The client gives a new subject its level in a second request, after the first version. So the
   * level may still be the registry's default, NONE: a process stopped between the two requests,
   * or another one is registering the subject at this moment (roles starting together on a new
   * registry), when the registry also refuses every level set after the first (409). Either way the
   * subject gets BACKWARD and the schema is registered; an operator's own choice of another level
   * (FULL, FORWARD) is still refused.
   */
  private async registerNew(subject: string, body: { type: SchemaType.AVRO; schema: string }): Promise<number> {
    const { id } = await registerAgain(async () => {
      try {
        return await this.registry.register(body, { subject });
      } catch (error) {
        const level = await this.compatibilityOf(subject).catch(() => undefined);
        if (level === 'NONE') await this.setBackward(subject);
        else if (level !== 'BACKWARD') throw error;
        const id = await this.registeredId(subject, body);
        return id === undefined ? this.registry.register(body, { subject }) : { id };
      }
    });
    return id;
  }

  private async compatibilityOf(subject: string): Promise<string> {
    const response = await request(`${this.registryUrl}/config/${encodeURIComponent(subject)}`);
    const answer = (await response.body.json()) as { compatibilityLevel?: string };
    if (response.statusCode !== 200 || !answer.compatibilityLevel) throw new SerdeError(`the registry gave no compatibility level for ${subject} (${response.statusCode})`);
    return answer.compatibilityLevel.toUpperCase();
  }

  private async setBackward(subject: string): Promise<void> {
    const response = await request(`${this.registryUrl}/config/${encodeURIComponent(subject)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: 'BACKWARD' }),
    });
    const text = await response.body.text();
    if (response.statusCode === 200 || (response.statusCode === 409 && (await this.compatibilityOf(subject)) === 'BACKWARD')) return;
    throw new SerdeError(`the registry refused the BACKWARD level for ${subject}: ${response.statusCode} ${text}`);
  }

  private serdeFor<T>(subject: string, schemaId: number, reader: avro.Type): RecordSerde<T> {
    const unions: UnionCodec = compileUnionCodec(reader, this.kinds);
    const resolvers = new Map<number, avro.Resolver>();
    const known = (writerId: number) => writerId === schemaId || resolvers.has(writerId);
    const fetchResolver = async (writerId: number): Promise<void> => {
      const writer = (await this.registry.getSchema(writerId)) as unknown as avro.Type;
      resolvers.set(writerId, reader.createResolver(writer));
    };
    const read = (buffer: Buffer, writerId: number): T => {
      const failure = `cannot decode ${subject} written with schema ${writerId}`;
      let offset: number;
      try {
        // Read in place from after the header: a view of the body would be a Buffer object per record.
        const decoded = writerId === schemaId ? reader.decode(buffer, HEADER_SIZE) : reader.decode(buffer, HEADER_SIZE, resolvers.get(writerId));
        if (decoded.offset === buffer.length) return unions.fromWire(decoded.value) as T;
        offset = decoded.offset;
      } catch (cause) {
        throw new SerdeError(failure, { cause });
      }
      throw new SerdeError(`${failure}: ${offset < 0 ? 'truncated' : `${buffer.length - offset} bytes of trailing data`}`);
    };
    // Records are encoded one after another into a slab and handed out as views of it, with no
    // copy. The first record takes a slab; a full one is let go, kept alive by the records still
    // queued for the broker until they are sent.
    let slab = Buffer.alloc(0);
    let used = 0;

    return {
      subject,
      schemaId,
      encode(value: T): Buffer {
        const wire = unions.toWire(value);
        let start = used;
        let end: number;
        try {
          end = reader.encode(wire, slab, start + HEADER_SIZE);
          if (end < 0) {
            // The rest of the slab is too small (`end` is minus the bytes missing): a new slab, large enough.
            slab = Buffer.allocUnsafe(Math.max(SLAB_BYTES, slab.length - start - end));
            start = 0;
            end = reader.encode(wire, slab, HEADER_SIZE);
          }
        } catch (cause) {
          const paths: string[] = [];
          reader.isValid(wire, { errorHook: (path) => paths.push(path.join('.')) });
          throw new SerdeError(`cannot encode ${subject}: invalid ${paths.join(', ') || String(cause)}`, { cause });
        }
        slab.writeUInt8(MAGIC_BYTE, start);
        slab.writeInt32BE(schemaId, start + 1);
        used = end;
        return slab.subarray(start, end);
      },
      decode(buffer: Buffer): T | Promise<T> {
        const fetching = this.ready(buffer);
        return fetching === undefined ? this.decodeKnown(buffer) : fetching.then(() => this.decodeKnown(buffer));
      },
      ready(buffer: Buffer): Promise<void> | undefined {
        const writerId = writerIdOf(buffer);
        return writerId === undefined || known(writerId) ? undefined : fetchResolver(writerId);
      },
      decodeKnown(buffer: Buffer): T {
        const writerId = writerIdOf(buffer);
        if (writerId === undefined) throw new SerdeError(`${subject}: not in the registry wire format`);
        if (!known(writerId)) throw new SerdeError(`${subject}: schema ${writerId} is not known yet`);
        return read(buffer, writerId);
      },
    };
  }
}
