// The libFuzzer entry points, one set for every target: each target's file
// declares `enum Target: FuzzTarget`, and these call it, so that every input
// runs under the heap budget (HeapBudget.swift) whatever the target.

protocol FuzzTarget {
    /// The target's name, as a trap over the heap budget says it.
    static var name: StaticString { get }
    /// Work done once, before the first input: fixtures a table or key costs
    /// too much to build per input, or the seed writer.
    static func prepare()
    /// One input, whole (possibly empty).
    static func run(_ input: [UInt8])
}

extension FuzzTarget {
    static func prepare() {}
}

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> CInt {
    Target.prepare()
    HeapBudget.install()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let heap = HeapBudget.start()
    defer { HeapBudget.check(since: heap, Target.name) }
    Target.run(count == 0 ? [] : Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
