import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, lstatSync, openSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { eachLine, fileKind, InputFileError, NOT_FOLLOWED } from '../process.js';
import { dirname } from 'node:path';
import { CtxsimError } from '../errors.js';
import { Cassette, cassetteLineLimit, entryLine, type CassetteEntry } from './cassette.js';

/**
 * A recording's journal: the responses received so far, in the order they
 * came, one cassette line each (`entryLine`), appended and flushed to disk
 * (fsync) as each arrives. It lives beside the cassette, named after it with
 * `.journal` added, from the first response until the recording completes:
 * then the cassette is written, sorted, and the journal removed. A recording
 * stopped any other way (Ctrl-C, SIGTERM, a kill, a failure, the cost cap)
 * leaves it, and the next recording reads it with the cassette and sends
 * only what neither holds.
 *
 * The journal is a regular file of its own, never a symbolic link: one in
 * its place (as a repository can ship, pointing anywhere, or nowhere yet) is
 * refused when it is read and when it is opened to append (O_NOFOLLOW), so a
 * recording writes only beside its cassette; so is a file with other hard
 * links (another name of it may lie anywhere).
 */
export class Journal {
  /** The open file, from the first response on. */
  private fd: number | undefined;
  /** Responses in the file: those read, and those appended. */
  private count: number;

  private constructor(
    /** The journal file. */
    readonly path: string,
    /** How to name it in a message. */
    readonly shown: string,
    /** Bytes of whole lines at its start: what follows is a line a kill cut short, cut off before the next line is appended. */
    private readonly whole: number,
    private readonly torn: boolean,
    read: number,
  ) {
    this.count = read;
  }

  /** The journal of a cassette file. */
  static pathOf(cassette: string): string {
    return `${cassette}.journal`;
  }

  /**
   * Reads the journal of `cassetteFile`, when there is one, into `cassette`:
   * each whole line is a response, checked as a cassette line is (its vector
   * against the cassette's too) and replacing the cassette's response to the
   * same request. A last line without its newline is a write a kill cut
   * short: dropped (its request is sent again). Nothing is written here.
   */
  static read(cassetteFile: string, cassette: Cassette, display: (path: string) => string): Journal {
    const path = Journal.pathOf(cassetteFile);
    const shown = display(path);
    if (!there(path)) return new Journal(path, shown, 0, false, 0);
    refuseHardLinks(lstatSync(path), shown);
    const parser = Cassette.parser(shown, cassette);
    let lines = 0;
    let read: { bytes: number; whole: number };
    try {
      read = eachLine(
        path,
        (line, n) => {
          parser.line(line, n);
          if (line.trim()) lines++;
        },
        { partial: false, limit: cassetteLineLimit(shown), follow: false, shown },
      );
    } catch (e) {
      if (e instanceof InputFileError) throw refused(shown, e.reason);
      if (e instanceof CtxsimError) throw e;
      throw new CtxsimError(`cannot read the recording journal ${shown} (${(e as NodeJS.ErrnoException).code ?? e})`, 'upkeep-journal');
    }
    parser.done();
    return new Journal(path, shown, read.whole, read.whole < read.bytes, lines);
  }

  /** Responses the journal holds (read and appended). */
  get size(): number {
    return this.count;
  }

  /** Whether the file is there (it is made at the first response). */
  get exists(): boolean {
    return this.fd !== undefined || there(this.path);
  }

  /** Appends a response and flushes it to disk before returning: once this returns, a kill keeps it. */
  append(entry: CassetteEntry): void {
    try {
      this.fd ??= this.open();
      const line = Buffer.from(entryLine(entry));
      for (let at = 0; at < line.length; ) at += writeSync(this.fd, line, at);
      fsyncSync(this.fd);
    } catch (e) {
      if (e instanceof CtxsimError) throw e;
      throw new CtxsimError(`cannot write the recording journal ${this.shown} (${(e as NodeJS.ErrnoException).code ?? e})`, 'upkeep-journal');
    }
    this.count++;
  }

  /** Closes the file (the journal stays). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Closes and removes the journal: its responses are in the cassette written. */
  remove(): void {
    this.close();
    if (there(this.path)) unlinkSync(this.path);
  }

  /**
   * Opens the file to append (made if missing): never through a symbolic
   * link (checked, and O_NOFOLLOW where the system has it), never anything
   * but a regular file (opened without blocking, then checked: a FIFO is not
   * waited on). A torn last line is cut off first; a new file's folder is
   * flushed too, so the file itself survives a crash.
   */
  private open(): number {
    const made = !there(this.path);
    if (!made && lstatSync(this.path).isSymbolicLink()) throw refused(this.shown, NOT_FOLLOWED);
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0), 0o666);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // ELOOP: a link put there since the check; ENXIO: a FIFO no one reads.
      if (code === 'ELOOP') throw refused(this.shown, NOT_FOLLOWED);
      if (code === 'ENXIO') throw refused(this.shown, 'is a FIFO, not a regular file');
      throw e;
    }
    const st = fstatSync(fd);
    const kind = fileKind(st);
    try {
      if (kind) throw refused(this.shown, `is ${kind}, not a regular file`);
      refuseHardLinks(st, this.shown);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
    if (this.torn) ftruncateSync(fd, this.whole);
    if (made) syncFolder(dirname(this.path));
    return fd;
  }
}

/** A journal that is not a regular file of its own, refused: nothing is read from it or written to it. */
function refused(shown: string, reason: string): CtxsimError {
  return new CtxsimError(`the recording journal ${shown} ${reason}; remove it, and record again`, 'upkeep-journal');
}

/**
 * Refuses a journal with other hard links: another name of the same file,
 * which may lie anywhere on the disk (a file of the user's that a planted
 * link names), would be read, cut short and appended to through it.
 */
function refuseHardLinks(st: Stats, shown: string): void {
  if (st.isFile() && st.nlink > 1) throw refused(shown, `has other hard links (${st.nlink} names of one file), which are not written through here`);
}

/** Whether something is at `path`, a symbolic link included (one that leads nowhere too). */
function there(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Flushes a folder's entries to disk (where a folder can be opened: not on Windows, where a file's flush suffices). */
function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // A platform that cannot open or flush a folder: the file's own flush is what it offers.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
