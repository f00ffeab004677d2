import type { AccountId, InstanceId, ProjectId } from '../../schemas/ids.js';
import type { Media } from '../../schemas/records.js';

/** Whose storage allowance a received media counts against. */
export interface MediaOwner {
  readonly accountId: AccountId;
  readonly projectId: ProjectId | null;
  readonly instanceId: InstanceId | null;
}

/**
 * Where connectors put the bytes of received media: the private media store (S3). The returned
 * Media is what travels on the log; bytes never do.
 */
export interface MediaSink {
  store(bytes: Buffer, mime: string, filename: string | undefined, owner: MediaOwner): Promise<Media>;
}
