/** Collects whatever rejects unhandled or throws uncaught while it watches; a test expects none. */
export function watchProcess() {
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => void escaped.push(error);
  process.on('unhandledRejection', onEscape);
  process.on('uncaughtException', onEscape);
  return {
    escaped,
    stop() {
      process.off('unhandledRejection', onEscape);
      process.off('uncaughtException', onEscape);
    },
  };
}
