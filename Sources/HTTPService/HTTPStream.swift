import Foundation

/// A response body sent as it is made (`text/event-stream`): whoever makes
/// it calls `send` with each chunk and `finish` at its end, from any thread.
/// While nothing is queued the daemon holds the connection suspended (no
/// thread, no deadline, and no reads, so a client that left is noticed at
/// the next chunk): whoever makes the stream bounds how many are open and
/// how long each goes without a chunk. `onEnd` runs once, when the daemon
/// lets go of the response, however it ended (`finish`, the client gone, the
/// daemon's stop); after it, `send` returns false.
///
/// Unchecked Sendable: every field is under `lock`.
public final class HTTPStream: @unchecked Sendable {
    /// Bytes queued and not yet taken by the daemon at most: beyond, the client is not reading, and the stream ends.
    public static let maxPendingBytes = 64 << 10

    private let lock = NSLock()
    private var pending: [UInt8] = []
    private var offset = 0
    private var finished = false
    private var closed = false
    /// Set while the daemon holds the connection suspended for want of bytes: resumes it.
    private var resume: (@Sendable () -> Void)?
    private let onEnd: @Sendable () -> Void

    public init(onEnd: @escaping @Sendable () -> Void = {}) {
        self.onEnd = onEnd
    }

    /// Queues `bytes`; false (and nothing queued) once the stream is over.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !finished, !closed else { return false }
        if pending.count - offset + bytes.count > Self.maxPendingBytes {
            finished = true
            pending = []
            offset = 0
            wake()
            return false
        }
        if offset > 0 {
            pending.removeFirst(offset)
            offset = 0
        }
        pending += bytes
        wake()
        return true
    }

    /// Ends the body once what is queued has gone out.
    public func finish() {
        lock.lock()
        defer { lock.unlock() }
        finished = true
        wake()
    }

    /// Whether `send` may still queue bytes.
    public var isOpen: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !finished && !closed
    }

    private func wake() {
        let resume = self.resume
        self.resume = nil
        resume?()
    }

    enum Read { case bytes(Int), suspended, end }

    /// The daemon's side: copies what is queued (at most `capacity` bytes)
    /// into `buffer`; with nothing queued, calls `suspend`, which suspends
    /// the connection and returns how to resume it (nil: the daemon is
    /// stopping, and the body ends).
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int, suspend: () -> (@Sendable () -> Void)?) -> Read {
        lock.lock()
        defer { lock.unlock() }
        if offset < pending.count {
            let count = min(capacity, pending.count - offset)
            pending.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
            offset += count
            return .bytes(count)
        }
        if finished { return .end }
        guard let resume = suspend() else { return .end }
        self.resume = resume
        return .suspended
    }

    /// The daemon let go of the response.
    func close() {
        lock.lock()
        let first = !closed
        closed = true
        resume = nil
        pending = []
        lock.unlock()
        if first { onEnd() }
    }
}
