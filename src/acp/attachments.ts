/**
 * Images a client sends, kept outside the log: the log's image block references the bytes by
 * content hash (`sha256-<hex>`), and the bytes are one file per hash in a directory beside the
 * sessions. The model adapters read them back through `resolve`, so a resumed or forked session
 * sends the same pixels. Only the image types the providers take are accepted.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { AttachmentResolver } from '../llm/attachments.js';
import type { ImageAttachmentRef } from '../model/message.js';
import { AcpError } from './errors.js';

export const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** Larger images are refused rather than stored (providers refuse them too). */
export const IMAGE_MAX_BYTES = 20 * 1024 * 1024;

export class AttachmentStore {
  constructor(readonly dir: string) {}

  /** Store base64 image data; returns the reference the log records. */
  putBase64(data: string, mediaType: string, name?: string): ImageAttachmentRef {
    if (!IMAGE_TYPES.has(mediaType))
      throw new AcpError('ATTACHMENT_INVALID', `image type ${JSON.stringify(mediaType)} is not one of ${[...IMAGE_TYPES].join(', ')}`);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data)) throw new AcpError('ATTACHMENT_INVALID', 'image data is not base64');
    const bytes = Buffer.from(data, 'base64');
    if (bytes.length === 0) throw new AcpError('ATTACHMENT_INVALID', 'image data is empty');
    if (bytes.length > IMAGE_MAX_BYTES)
      throw new AcpError('ATTACHMENT_INVALID', `image is ${bytes.length} bytes; images up to ${IMAGE_MAX_BYTES} bytes are taken`);
    const id = `sha256-${createHash('sha256').update(bytes).digest('hex')}`;
    const file = join(this.dir, id);
    if (!existsSync(file)) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      // Written aside and renamed: a reader never sees half an image.
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, bytes, { mode: 0o600 });
      renameSync(tmp, file);
    }
    return { attachmentId: id, mediaType, bytes: bytes.length, ...(name ? { name } : {}) };
  }

  readonly resolve: AttachmentResolver = (ref) => {
    if (!/^sha256-[0-9a-f]{64}$/.test(ref.attachmentId)) return undefined;
    try {
      return { data: readFileSync(join(this.dir, ref.attachmentId)).toString('base64'), mediaType: ref.mediaType };
    } catch {
      return undefined;
    }
  };
}
