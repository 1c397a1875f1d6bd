import Foundation

/// The quota a response states (``RateLimitPolicy``), in either dialect: the IETF httpapi
/// draft's `RateLimit` and `RateLimit-Policy` structured fields, or `X-RateLimit-Limit`,
/// `X-RateLimit-Remaining` and `X-RateLimit-Reset`; and what a `429` with `Retry-After` in
/// seconds says (nothing remains until then). Each part is `nil` when the response does not
/// say it.
struct ServerQuota: Sendable, Equatable {
    /// The requests a window allows.
    var limit: Int?
    /// The window's length, in seconds.
    var window: TimeInterval?
    /// The requests that remain in the current window.
    var remaining: Int?
    /// The seconds from the response to the window's reset.
    var resetIn: TimeInterval?

    /// Whether the response stated anything of its quota.
    var isEmpty: Bool { limit == nil && window == nil && remaining == nil && resetIn == nil }

    /// The quota a response with status `status` states, reading its fields with `field` (the
    /// first value of a field by name, in any case); `nowSince1970` is the wall clock, for an
    /// `X-RateLimit-Reset` given as a time. `nil` when it states nothing.
    static func read(status: Int, field: (String) -> String?, nowSince1970: TimeInterval) -> ServerQuota? {
        var quota = ServerQuota()
        if let value = field("RateLimit") {
            // With several policies, the one with the fewest requests left is the one that counts.
            let members = parameters(ofList: value).filter { $0.parameters["r"] != nil }
            if let tightest = members.min(by: { ($0.parameters["r"] ?? 0) < ($1.parameters["r"] ?? 0) }) {
                quota.remaining = tightest.parameters["r"].map(count)
                quota.resetIn = tightest.parameters["t"].map { max(0, $0) }
                if let policies = field("RateLimit-Policy").map(parameters(ofList:)) {
                    let policy = policies.first { $0.name == tightest.name } ?? policies.min { ($0.parameters["q"] ?? 0) < ($1.parameters["q"] ?? 0) }
                    quota.limit = policy?.parameters["q"].map(count)
                    quota.window = policy?.parameters["w"].flatMap { $0 > 0 ? $0 : nil }
                }
            }
        } else if let value = field("RateLimit-Policy") {
            let policy = parameters(ofList: value).min { ($0.parameters["q"] ?? 0) < ($1.parameters["q"] ?? 0) }
            quota.limit = policy?.parameters["q"].map(count)
            quota.window = policy?.parameters["w"].flatMap { $0 > 0 ? $0 : nil }
        }
        if quota.remaining == nil, let remaining = field("X-RateLimit-Remaining").flatMap(number) {
            quota.remaining = count(remaining)
            quota.limit = quota.limit ?? field("X-RateLimit-Limit").flatMap(number).map(count)
            if let reset = field("X-RateLimit-Reset").flatMap(number) {
                // A time since 1970 (GitHub's), or the seconds to the reset.
                quota.resetIn = reset >= 1_000_000_000 ? max(0, reset - nowSince1970) : reset
            }
        }
        if status == 429, let retryAfter = field("Retry-After").flatMap(number), retryAfter >= 0 {
            quota.remaining = 0
            quota.resetIn = max(quota.resetIn ?? 0, retryAfter)
        }
        return quota.isEmpty ? nil : quota
    }

    /// A list's members (RFC 8941, read leniently): each member's name (its string or token)
    /// and its numeric parameters (`r=42`).
    static func parameters(ofList value: String) -> [(name: String, parameters: [String: Double])] {
        split(value, on: ",").map { member in
            let parts = split(member, on: ";")
            var name = parts.first?.trimmingCharacters(in: .whitespaces) ?? ""
            if name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 { name = String(name.dropFirst().dropLast()) }
            var parameters: [String: Double] = [:]
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, let number = number(pair[1]) else { continue }
                parameters[pair[0].lowercased()] = number
            }
            return (name, parameters)
        }
    }

    /// `value` split on `separator` outside double quotes.
    private static func split(_ value: String, on separator: Character) -> [String] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        for character in value {
            if character == "\"" { quoted.toggle() }
            if character == separator, !quoted {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }

    /// `number` as a count, at most a billion: a hostile server's 1e30 must not trap.
    private static func count(_ number: Double) -> Int {
        Int(min(max(0, number), 1_000_000_000))
    }

    /// A finite, non-negative number written in `text`, or `nil`.
    private static func number(_ text: String) -> Double? {
        guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite, number >= 0 else { return nil }
        return number
    }
}
