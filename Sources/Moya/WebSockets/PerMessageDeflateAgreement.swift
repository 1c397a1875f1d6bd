/// The permessage-deflate parameters a server agreed to (RFC 7692, section 7), read from its
/// `Sec-WebSocket-Extensions` answer to the client's offer.
struct PerMessageDeflateAgreement: Sendable, Equatable {
    /// Whether the client resets its compressor after each message.
    var clientNoContextTakeover = false
    /// Whether the server resets its compressor after each message (the client may then reset
    /// its decompressor too).
    var serverNoContextTakeover = false
    /// The client's compression window, as a power of two.
    var clientMaxWindowBits = 15
    /// The server's compression window, as a power of two.
    var serverMaxWindowBits = 15

    /// Reads the server's `Sec-WebSocket-Extensions` values against `offer`.
    ///
    /// - Returns: `nil` when the server agreed to no extension (it may always decline).
    /// - Throws: ``WebSocketError/handshakeFailed(reason:)`` for an extension that was not
    ///   offered, more than one, a parameter that is unknown, repeated, has a value out of range,
    ///   or answers an offer the client did not make; a window of 8 bits, which zlib cannot
    ///   compress with.
    static func negotiate(_ values: [String], offer: WebSocketCompression) throws(WebSocketError) -> PerMessageDeflateAgreement? {
        let extensions = values.flatMap { splitList($0) }.filter { !$0.isEmpty }
        guard let first = extensions.first else { return nil }
        guard offer.isEnabled else {
            throw .handshakeFailed(reason: "the server agreed to an extension that was not offered: \(first)")
        }
        guard extensions.count == 1 else {
            throw .handshakeFailed(reason: "the server agreed to more than one extension: \(extensions.joined(separator: ", "))")
        }
        let parts = first.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingSpaces }
        guard parts[0].lowercased() == "permessage-deflate" else {
            throw .handshakeFailed(reason: "the server agreed to an extension that was not offered: \(parts[0])")
        }
        var agreement = PerMessageDeflateAgreement()
        var seen = Set<String>()
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
            let name = pair.first?.lowercased() ?? ""
            var value = pair.count > 1 ? pair[1] : nil
            if let quoted = value, quoted.count >= 2, quoted.hasPrefix("\""), quoted.hasSuffix("\"") {
                value = String(quoted.dropFirst().dropLast())
            }
            guard seen.insert(name).inserted else {
                throw .handshakeFailed(reason: "permessage-deflate parameter \(name) given twice")
            }
            switch name {
            case "server_no_context_takeover":
                guard value == nil else { throw .handshakeFailed(reason: "server_no_context_takeover takes no value") }
                agreement.serverNoContextTakeover = true
            case "client_no_context_takeover":
                guard value == nil else { throw .handshakeFailed(reason: "client_no_context_takeover takes no value") }
                agreement.clientNoContextTakeover = true
            case "server_max_window_bits":
                let bits = try windowBits(value, name: name)
                if let offered = offer.serverMaxWindowBits, bits > offered {
                    throw .handshakeFailed(reason: "server_max_window_bits=\(bits) is larger than the \(offered) offered")
                }
                agreement.serverMaxWindowBits = bits
            case "client_max_window_bits":
                // Offered always (with or without a value), so the server may answer it.
                let bits = try windowBits(value, name: name)
                if let offered = offer.clientMaxWindowBits, bits > offered {
                    throw .handshakeFailed(reason: "client_max_window_bits=\(bits) is larger than the \(offered) offered")
                }
                guard bits >= 9 else {
                    throw .handshakeFailed(reason: "client_max_window_bits=8 is not supported (zlib compresses with 9 to 15)")
                }
                agreement.clientMaxWindowBits = bits
            default:
                throw .handshakeFailed(reason: "unknown permessage-deflate parameter \(String(reflecting: name))")
            }
        }
        if offer.serverNoContextTakeover, !agreement.serverNoContextTakeover {
            throw .handshakeFailed(reason: "the server did not agree to server_no_context_takeover, which was offered")
        }
        if offer.clientNoContextTakeover { agreement.clientNoContextTakeover = true }
        if let offered = offer.serverMaxWindowBits, !seen.contains("server_max_window_bits") {
            throw .handshakeFailed(reason: "the server did not answer server_max_window_bits=\(offered), which was offered")
        }
        if let offered = offer.clientMaxWindowBits, agreement.clientMaxWindowBits > offered {
            agreement.clientMaxWindowBits = offered
        }
        return agreement
    }

    /// The elements of a comma-separated header value, trimmed; commas inside quoted strings
    /// do not split.
    private static func splitList(_ value: String) -> [String] {
        var elements: [String] = []
        var current = ""
        var inQuotes = false
        for character in value {
            if character == "\"" { inQuotes.toggle() }
            if character == ",", !inQuotes {
                elements.append(Substring(current).trimmingSpaces)
                current = ""
            } else {
                current.append(character)
            }
        }
        elements.append(Substring(current).trimmingSpaces)
        return elements
    }

    /// A window size parameter's value: a decimal number in 8...15 without a leading zero.
    private static func windowBits(_ value: String?, name: String) throws(WebSocketError) -> Int {
        guard let value, let bits = Int(value), (8...15).contains(bits), String(bits) == value else {
            throw .handshakeFailed(reason: "\(name) needs a value from 8 to 15, not \(value.map { String(reflecting: $0) } ?? "none")")
        }
        return bits
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
