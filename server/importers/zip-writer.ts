/** A minimal zip writer (deflate or store, no zip64) for tests and the bench: builds export archives without a dependency. */
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import zlib from "node:zlib";

export interface ZipFileEntry {
  name: string;
  data: Buffer | string;
  store?: boolean;
}

function dosTime(d: Date): { time: number; date: number } {
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | Math.floor(d.getSeconds() / 2),
    date: ((d.getFullYear() - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

/** Writes `entries` to `file` as a zip archive. */
export async function writeZip(file: string, entries: ZipFileEntry[]): Promise<void> {
  const out = createWriteStream(file);
  const central: Buffer[] = [];
  let offset = 0;
  const write = async (b: Buffer) => {
    if (!out.write(b)) await once(out, "drain");
    offset += b.length;
  };
  const { time, date } = dosTime(new Date(2025, 0, 1));
  for (const e of entries) {
    const raw = Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data);
    const method = e.store ? 0 : 8;
    const body = e.store ? raw : zlib.deflateRawSync(raw);
    const crc = zlib.crc32(raw) >>> 0;
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(0x0800, 8);
    cd.writeUInt16LE(method, 10);
    cd.writeUInt16LE(time, 12);
    cd.writeUInt16LE(date, 14);
    cd.writeUInt32LE(crc, 16);
    cd.writeUInt32LE(body.length, 20);
    cd.writeUInt32LE(raw.length, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    central.push(cd, name);
    await write(local);
    await write(name);
    await write(body);
  }
  const cdStart = offset;
  const cdBuf = Buffer.concat(central);
  await write(cdBuf);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cdBuf.length, 12);
  end.writeUInt32LE(cdStart, 16);
  await write(end);
  out.end();
  await once(out, "finish");
}
