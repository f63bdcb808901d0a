// The lines of a byte stream (a watch's JSON lines), whole and decoded as UTF-8 once each. Splitting each chunk's
// string instead (`(rest + chunk.toString()).split('\n')`) decoded a character split across two chunks as two
// replacement characters, and re-joined and re-scanned the unfinished line at every chunk: a CRD of ~1 MB arriving in
// 64 KB chunks was scanned ~16 times over (the lab process's watch loop showed in its profiles). Bytes are held until
// their line's newline arrives.
export class LineSplitter {
  private pending: Buffer[] = [];

  /** The lines this chunk completes (without their newline), in order. */
  push(chunk: Buffer): string[] {
    const out: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      if (this.pending.length) {
        this.pending.push(chunk.subarray(start, nl));
        out.push(Buffer.concat(this.pending).toString('utf8'));
        this.pending = [];
      } else {
        out.push(chunk.toString('utf8', start, nl));
      }
      start = nl + 1;
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
    return out;
  }
}
