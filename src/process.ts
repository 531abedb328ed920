/** Whether process `pid` is alive on this machine (a process of another user counts). */
export function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: alive, but another user's.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
