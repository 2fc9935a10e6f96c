/**
 * Image blocks in the log reference stored attachments by id; the bytes live outside the log. An
 * adapter only sends pixels when the host gives it a resolver, and otherwise tells the model an
 * image was there, so the conversation still reads coherently.
 */
import type { ImageAttachmentRef } from '../model/message.js';

export interface ResolvedAttachment {
  /** Base64 without a `data:` prefix. */
  data: string;
  mediaType: string;
}

export type AttachmentResolver = (ref: ImageAttachmentRef) => ResolvedAttachment | undefined | Promise<ResolvedAttachment | undefined>;

export function imagePlaceholder(ref: ImageAttachmentRef, why: string): string {
  const name = ref.name ? `${ref.name}, ` : '';
  return `[image ${name}${ref.mediaType}, attachment ${ref.attachmentId}: ${why}]`;
}

export async function resolveImage(
  ref: ImageAttachmentRef,
  resolver: AttachmentResolver | undefined,
): Promise<ResolvedAttachment | undefined> {
  return resolver ? await resolver(ref) : undefined;
}
