/// The one identity rule for the ids the config names and events carry
/// (tenant ids, merchant ids, origins): two ids are the same id when their
/// UTF-8 bytes are equal, and in no other case. Not Unicode equivalence, not
/// case, not a normalization: PostgreSQL keys every stored row, nonce and
/// session by the id's bytes, the worker matches events by them, and a rule
/// that merged two byte sequences anywhere would make one tenant's rows
/// answer for another's. Nothing is normalized, so an id reaches the
/// database, the outcome and the logs exactly as it was written.
///
/// What bytes cannot do is tell an operator two ids apart that look the same:
/// "Café" written with U+00E9 and with "e" + U+0301, or "K" and the Kelvin
/// sign. So the config refuses two ids that are canonically equivalent
/// (Swift's `==` on strings) without being the same bytes: two tenants, or
/// merchant ids anywhere in the file, that the rule would keep apart but a
/// person could not. Within what the config accepts, bytes and what a reader
/// sees agree.
public enum IdentityRule {
    /// Whether `a` and `b` are the same id.
    public static func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    /// Whether `a` and `b` are different ids that look the same.
    public static func confusable(_ a: String, _ b: String) -> Bool { a == b && !same(a, b) }

    /// The first pair of `ids` (in order) that are confusable, as indexes.
    static func firstConfusablePair(_ ids: [String]) -> (Int, Int)? {
        // Keyed by Swift's equality, so each group holds one byte form until a second one is found: linear time.
        var first: [String: Int] = [:]
        for (index, id) in ids.enumerated() {
            if let earlier = first[id] {
                if !same(ids[earlier], id) { return (earlier, index) }
            } else {
                first[id] = index
            }
        }
        return nil
    }
}
