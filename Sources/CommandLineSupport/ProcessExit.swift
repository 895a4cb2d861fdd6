// stdout and stderr are C globals, which Swift 6 refuses to read outside an
// actor; flushing them at exit is the one use, and nothing else runs then.
@preconcurrency import Glibc

/// Ends the process with `status` once stdout and stderr are flushed.
///
/// `_exit`, not `exit`: exit runs the libraries' atexit teardown (OpenSSL
/// frees its locks) while their other threads (libdispatch, librdkafka,
/// libmicrohttpd) may still be using them, a crash after the command's
/// answer. Nothing needs that teardown: every file, socket and server has
/// been closed by its owner. Not `fflush(nil)`: it waits for stdin's lock,
/// which a thread blocked reading stdin holds.
public func exitAfterFlushing(_ status: Int32) -> Never {
    fflush(stdout)
    fflush(stderr)
    _exit(status)
}
