// A per-input heap budget, for every target: an input that holds more than
// `HeapBudget.limit` bytes of heap at once, beyond what was live when it
// started, traps. -rss_limit_mb cannot say
// this: the process's RSS also holds ASan's quarantine, its redzones, the
// corpus and the allocator's fragmentation, creeps up over a long run, and
// never falls back after a peak. The bytes counted are those the
// program asked for, through the sanitizer runtime's malloc and free hooks;
// without a sanitizer runtime (FUZZ_SANITIZERS=fuzzer) there is no check.
import Foundation
import Synchronization

private let live = Atomic<Int>(0)
private let peak = Atomic<Int>(0)
nonisolated(unsafe) private var allocatedSize: (@convention(c) (UnsafeRawPointer?) -> Int)?

// Called inside malloc and free: they must not allocate.
private let mallocHook: @convention(c) (UnsafeRawPointer?, Int) -> Void = { _, size in
    let now = live.wrappingAdd(size, ordering: .relaxed).newValue
    if now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
}

private let freeHook: @convention(c) (UnsafeRawPointer?) -> Void = { pointer in
    guard let pointer, let allocatedSize else { return }
    live.wrappingSubtract(allocatedSize(pointer), ordering: .relaxed)
}

enum HeapBudget {
    /// A normal event holds a few megabytes; 64 MB from one input of at most
    /// -max_len is a cost out of proportion, whatever the input's shape.
    static let limit = 64 << 20

    /// Installs the hooks (once, from `LLVMFuzzerInitialize`).
    static func install() {
        typealias Install = @convention(c) (
            (@convention(c) (UnsafeRawPointer?, Int) -> Void)?, (@convention(c) (UnsafeRawPointer?) -> Void)?
        ) -> CInt
        typealias Size = @convention(c) (UnsafeRawPointer?) -> Int
        let handle = dlopen(nil, RTLD_NOW)
        guard let install = dlsym(handle, "__sanitizer_install_malloc_and_free_hooks"),
              let size = dlsym(handle, "__sanitizer_get_allocated_size")
        else { return }
        allocatedSize = unsafeBitCast(size, to: Size.self)
        _ = live.load(ordering: .relaxed) + peak.load(ordering: .relaxed)
        _ = unsafeBitCast(install, to: Install.self)(mallocHook, freeHook)
    }

    /// The heap live as an input starts; its peak is measured from here.
    static func start() -> Int {
        let now = live.load(ordering: .relaxed)
        peak.store(now, ordering: .relaxed)
        return now
    }

    /// Traps when the input held more than `limit` beyond `start` at once.
    static func check(since start: Int, _ target: StaticString) {
        let held = peak.load(ordering: .relaxed) - start
        if held > limit {
            fatalError("\(target): one input held \(held >> 20) MB of heap at once, more than the \(limit >> 20) MB budget")
        }
    }
}
