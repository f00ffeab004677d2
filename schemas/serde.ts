import avro from 'avsc';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { composeSchema, unionKinds, type NamedSchema } from './load.js';
import { compileUnionCodec, type UnionCodec } from './unions.js';

const MAGIC_BYTE = 0;
const HEADER_SIZE = 5;

/** Encodes and decodes one record type in the Confluent wire format: magic byte, schema id, Avro body. */
export interface RecordSerde<T> {
  readonly subject: string;
  readonly schemaId: number;
  encode(value: T): Buffer;
  /** Decodes a record written with any registered version of the schema into the current shape. */
  decode(buffer: Buffer): Promise<T>;
}

export class SerdeError extends Error {
  override readonly name = 'SerdeError';
}

/**
 * The serde side of the schema registry: registers the composed schemas of `schemas/`, then
 * encodes with the current version and decodes any version, resolving older writers to it.
 */
export class AvroSerdes {
  private readonly registry: SchemaRegistry;
  private readonly kinds: ReadonlyMap<string, string>;

  constructor(
    registryUrl: string,
    private readonly named: ReadonlyMap<string, NamedSchema>,
  ) {
    this.registry = new SchemaRegistry({ host: registryUrl, retry: { retries: 3 } });
    this.kinds = unionKinds(named);
  }

  /** Registers `fullName` under `subject` (BACKWARD compatibility) and returns its serde. */
  async register<T>(subject: string, fullName: string): Promise<RecordSerde<T>> {
    const schema = composeSchema(fullName, this.named);
    const { id } = await this.registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject });
    return this.serdeFor<T>(subject, id, avro.Type.forSchema(schema as avro.Schema));
  }

  private serdeFor<T>(subject: string, schemaId: number, reader: avro.Type): RecordSerde<T> {
    const unions: UnionCodec = compileUnionCodec(reader, this.kinds);
    const resolvers = new Map<number, avro.Resolver>();
    const resolverFor = async (writerId: number): Promise<avro.Resolver> => {
      const cached = resolvers.get(writerId);
      if (cached) return cached;
      const writer = (await this.registry.getSchema(writerId)) as unknown as avro.Type;
      const resolver = reader.createResolver(writer);
      resolvers.set(writerId, resolver);
      return resolver;
    };

    return {
      subject,
      schemaId,
      encode(value: T): Buffer {
        const wire = unions.toWire(value);
        let body: Buffer;
        try {
          body = reader.toBuffer(wire);
        } catch (cause) {
          const paths: string[] = [];
          reader.isValid(wire, { errorHook: (path) => paths.push(path.join('.')) });
          throw new SerdeError(`cannot encode ${subject}: invalid ${paths.join(', ') || String(cause)}`, { cause });
        }
        const out = Buffer.allocUnsafe(HEADER_SIZE + body.length);
        out.writeUInt8(MAGIC_BYTE, 0);
        out.writeInt32BE(schemaId, 1);
        body.copy(out, HEADER_SIZE);
        return out;
      },
      async decode(buffer: Buffer): Promise<T> {
        if (buffer.length < HEADER_SIZE || buffer.readUInt8(0) !== MAGIC_BYTE) {
          throw new SerdeError(`${subject}: not in the registry wire format`);
        }
        const writerId = buffer.readInt32BE(1);
        const body = buffer.subarray(HEADER_SIZE);
        const resolver = writerId === schemaId ? undefined : await resolverFor(writerId);
        try {
          return unions.fromWire(reader.fromBuffer(body, resolver)) as T;
        } catch (cause) {
          throw new SerdeError(`cannot decode ${subject} written with schema ${writerId}`, { cause });
        }
      },
    };
  }
}
