@testable import HTTPService
import Synchronization
import Testing

/// An answer given once; what waits on the client's leaving is let go once
/// the answer is given, since it often holds what holds the answer.
@Suite struct HTTPLaterTests {
    private final class Token: Sendable {}

    @Test func theFirstAnswerCountsAndAnsweringLetsGoOfTheAbandonmentCallbacks() {
        let later = HTTPLater()
        weak var held: Token?
        do {
            let token = Token()
            held = token
            later.whenAbandoned { _ = token }
        }
        #expect(held != nil, "kept while the client may still leave")
        #expect(later.complete(.text(200, "first")))
        #expect(!later.complete(.text(200, "second")))
        #expect(held == nil, "the abandonment callback outlived the answer")
        let seen = Mutex<[String]>([])
        later.whenComplete { response in seen.withLock { $0.append(String(decoding: response.body, as: UTF8.self)) } }
        #expect(seen.withLock { $0 } == ["first"])
    }

    @Test func aMappedAnswerPassesTheClientsLeavingBackToTheOriginal() {
        let original = HTTPLater()
        let mapped = original.map { var response = $0; response.headers.append(("X-Mapped", "1")); return response }
        let abandoned = Atomic<Int>(0), late = Atomic<Int>(0)
        original.whenAbandoned { abandoned.add(1, ordering: .relaxed) }
        mapped.abandon()
        mapped.abandon()
        #expect(abandoned.load(ordering: .relaxed) == 1)
        original.whenAbandoned { late.add(1, ordering: .relaxed) }
        #expect(late.load(ordering: .relaxed) == 1, "a callback added after the client left runs at once")
    }
}
