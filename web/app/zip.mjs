// A .zip archive of a few files, stored as they are (no compression: a model's weights hardly
// compress, and every unzip tool reads stored entries), so that "Download model" is one download.
// The format is PKWARE's APPNOTE.TXT: per file a local header and the data, then the central
// directory and its end record. Without the Zip64 extension: each file and the whole archive under
// 4 GiB, fewer than 65,536 files.

const encoder = new TextEncoder();

// CRC-32 (the IEEE polynomial, reflected), as zip entries carry it.
const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; ++i) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// The time as MS-DOS keeps it (two-second steps, local time), as zip headers do.
function dosTime(date) {
  const time = (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1);
  const day = ((date.getFullYear() - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate();
  return { time, day };
}

// files: [{name, data}] (data a string or a Uint8Array; name a path inside the archive, '/' between
// folders) -> a Blob of the archive (type application/zip). The data is not copied into one buffer.
export function zipArchive(files, date = new Date()) {
  if (files.length >= 0xffff)
    throw new RangeError(`a zip without Zip64 holds at most 65,534 files, not ${files.length}`);
  const { time, day } = dosTime(date);
  const parts = [],
    central = [];
  let offset = 0;
  for (const { name, data } of files) {
    const bytes = typeof data === 'string' ? encoder.encode(data) : data;
    const path = encoder.encode(name);
    if (bytes.length >= 0xffffffff || offset >= 0xffffffff)
      throw new RangeError(`${name} does not fit in a zip without Zip64 (4 GiB at most)`);
    const crc = crc32(bytes);
    // The fields the local header and the central directory share, from "version needed" on.
    const common = (view, at) => {
      view.setUint16(at, 20, true); // version needed to extract: 2.0
      view.setUint16(at + 2, 0x0800, true); // flags: the name is UTF-8
      view.setUint16(at + 4, 0, true); // method: stored
      view.setUint16(at + 6, time, true);
      view.setUint16(at + 8, day, true);
      view.setUint32(at + 10, crc, true);
      view.setUint32(at + 14, bytes.length, true); // compressed size
      view.setUint32(at + 18, bytes.length, true); // uncompressed size
      view.setUint16(at + 22, path.length, true);
      view.setUint16(at + 24, 0, true); // extra field length
    };
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    common(local, 4);
    parts.push(local, path, bytes);
    const entry = new DataView(new ArrayBuffer(46));
    entry.setUint32(0, 0x02014b50, true);
    entry.setUint16(4, 20, true); // version made by: 2.0, MS-DOS attributes
    common(entry, 6);
    // comment length, disk number, internal and external attributes: 0
    entry.setUint32(42, offset, true); // where the local header is
    central.push(entry, path);
    offset += 30 + path.length + bytes.length;
  }
  const size = central.reduce((sum, part) => sum + part.byteLength, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, files.length, true); // entries on this disk
  end.setUint16(10, files.length, true); // entries in all
  end.setUint32(12, size, true);
  end.setUint32(16, offset, true); // where the central directory starts
  return new Blob([...parts, ...central, end], { type: 'application/zip' });
}
