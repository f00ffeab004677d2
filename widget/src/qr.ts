import { encode } from 'uqr';

/** The dark modules of a QR code as one SVG path, in module units (`viewBox` 0 0 size size). */
export function qrPath(text: string): { size: number; path: string } {
  const { size, data } = encode(text, { ecc: 'M', border: 2 });
  let path = '';
  data.forEach((row, y) => row.forEach((dark, x) => {
    if (dark) path += `M${x} ${y}h1v1h-1z`;
  }));
  return { size, path };
}
