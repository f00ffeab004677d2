import { DOMParser, type Document, type Element } from '@xmldom/xmldom';
import { fileTypeFromBuffer } from 'file-type';

/** Spec 8.3: a partner logo is at most 2 MB. */
export const MAX_LOGO_BYTES = 2_000_000;

const RASTER = new Map([
  ['image/png', 'image/png'],
  ['image/jpeg', 'image/jpeg'],
  ['image/webp', 'image/webp'],
]);

export type LogoCheck = { readonly ok: true; readonly contentType: string } | { readonly ok: false; readonly why: string };

/**
 * What a logo is, by its bytes and never by its name: PNG, JPEG or WebP (read by `file-type`), or an
 * SVG that a strict XML parser reads as an `<svg>` document holding nothing that runs or reaches
 * out — no scripts, event handlers, foreign objects, DOCTYPE or entities, and no reference that
 * is not a fragment of the file itself.
 */
export async function checkLogo(bytes: Buffer): Promise<LogoCheck> {
  const sniffed = await fileTypeFromBuffer(bytes);
  if (sniffed !== undefined) {
    const contentType = RASTER.get(sniffed.mime);
    return contentType === undefined ? { ok: false, why: `a ${sniffed.mime} file is not a PNG, JPEG, WebP or SVG image` } : { ok: true, contentType };
  }
  const text = bytes.toString('utf8');
  if (!/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(text)) return { ok: false, why: 'the file is not a PNG, JPEG, WebP or SVG image' };
  const unsafe = svgHazard(text);
  return unsafe === undefined ? { ok: true, contentType: 'image/svg+xml' } : { ok: false, why: `the SVG ${unsafe}` };
}

const FORBIDDEN_ELEMENTS = new Set(['script', 'foreignobject', 'iframe', 'embed', 'object', 'audio', 'video', 'handler', 'listener']);
const REFERENCE_ATTRIBUTES = new Set(['href', 'xlink:href', 'src']);

function svgHazard(text: string): string | undefined {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) return 'declares a DOCTYPE or entities';
  const errors: string[] = [];
  let document: Document;
  try {
    document = new DOMParser({ onError: (level, message) => (level !== 'warning' ? errors.push(message) : undefined) }).parseFromString(text, 'image/svg+xml');
  } catch {
    return 'is not well-formed XML with an <svg> root';
  }
  if (errors.length > 0 || document.documentElement?.nodeName.toLowerCase() !== 'svg') return 'is not well-formed XML with an <svg> root';
  const pending: Element[] = [document.documentElement];
  while (pending.length > 0) {
    const element = pending.pop()!;
    const name = element.nodeName.toLowerCase();
    if (FORBIDDEN_ELEMENTS.has(name.replace(/^.*:/, ''))) return `contains <${element.nodeName}>`;
    for (let i = 0; i < element.attributes.length; i++) {
      const attribute = element.attributes.item(i)!;
      const attr = attribute.name.toLowerCase();
      const value = attribute.value.trim();
      if (attr.startsWith('on')) return `has an event handler (${attribute.name})`;
      if (REFERENCE_ATTRIBUTES.has(attr) && !value.startsWith('#')) return `refers to something outside itself (${attribute.name})`;
      if (/url\s*\(\s*['"]?\s*(?!#)/i.test(value) || /@import|javascript:/i.test(value)) return `refers to something outside itself (${attribute.name})`;
    }
    if (name === 'style' && /@import|url\s*\(\s*['"]?\s*(?!#)|javascript:/i.test(element.textContent ?? '')) return 'has a style that refers to something outside itself';
    for (let child = element.firstChild; child !== null; child = child.nextSibling) {
      if (child.nodeType === 1) pending.push(child as Element);
    }
  }
  return undefined;
}
