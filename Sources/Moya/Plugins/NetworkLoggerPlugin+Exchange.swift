import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What ``NetworkLoggerPlugin`` logs of the inside of an exchange (see ``ExchangePluginType``):
/// the request headers as the interceptors adapted them, the head of a streamed response as soon
/// as it arrives, and the first bytes of the bodies that are streamed.
extension NetworkLoggerPlugin: ExchangePluginType {
    /// ``Configuration/streamedBodyLimit`` when a body is logged
    /// (``Configuration/LogOptions/requestBody``, ``Configuration/LogOptions/successResponseBody``
    /// or ``Configuration/LogOptions/errorResponseBody``), otherwise 0.
    public var bodyPrefixLimit: Int {
        let configuration = self.configuration
        let bodies: Configuration.LogOptions = [.requestBody, .successResponseBody, .errorResponseBody]
        return configuration.logOptions.isDisjoint(with: bodies) ? 0 : configuration.streamedBodyLimit
    }

    /// Logs an event of an exchange:
    ///
    /// - `Adapted Request Headers` (with ``Configuration/LogOptions/requestHeaders``): the headers
    ///   an attempt is sent with after the interceptors changed them, such as the
    ///   `Authorization` an `AuthenticationInterceptor` adds (hidden, as every credential is).
    /// - `Request Body` (with ``Configuration/LogOptions/requestBody``): the first bytes of a
    ///   request body sent from a file or a stream.
    /// - `Response`: the head of a streamed response, when it arrives.
    /// - `Response Body` (with ``Configuration/LogOptions/successResponseBody``): the first bytes
    ///   of a streamed response's body; the stream's end is logged by
    ///   ``didReceive(_:target:)`` as `Response End`.
    ///
    /// A body is shown up to ``Configuration/streamedBodyLimit`` bytes and redacted as a whole
    /// body is. A body cut there ends at its last complete field (a value cut short could be the
    /// first characters of a credential) and says how much it shows.
    ///
    /// - Parameters:
    ///   - event:  What happened.
    ///   - target: The request's target.
    public func didObserve(_ event: ExchangeEvent, target: TargetType) {
        let configuration = self.configuration
        let formatter = configuration.formatter
        let options = configuration.logOptions
        let redaction = configuration.redaction
        var entries: [String] = []
        switch event {
        case .adapted(let request, let attempt):
            guard options.contains(.requestHeaders) || options.contains(.formatRequestAscURL) else { return }
            let headers = redaction.describe(headers: request.allHTTPHeaderFields ?? [:])
            entries.append(formatter.entry("Adapted Request Headers", "attempt \(attempt): \(headers)", target))
        case .requestBody(let prefix):
            guard options.contains(.requestBody) else { return }
            entries.append(formatter.entry("Request Body", Self.describe(prefix, redaction: redaction, format: formatter.requestData), target))
        case .responseHead(let head):
            entries.append(formatter.entry("Response", Self.describeHead(head, target: target, redaction: redaction), target))
        case .responseBody(let prefix):
            guard options.contains(.successResponseBody) else { return }
            entries.append(formatter.entry("Response Body", Self.describe(prefix, redaction: redaction, format: formatter.responseData), target))
        }
        configuration.output(target, entries)
    }

    /// The `Response` entry's message for `response`: its status line and headers, redacted, and
    /// the operation of a ``NamedTarget``.
    static func describeHead(_ response: Moya.Response, target: TargetType, redaction: Configuration.Redaction) -> String {
        guard let httpResponse = response.response else {
            return "Received empty network response for \(redaction.name(of: target))."
        }
        return redaction.describe(httpResponse) + operationSuffix(of: target)
    }

    /// A streamed body's first bytes as a log shows them: redacted, cut at its last complete
    /// field when the body went on, and saying so.
    static func describe(_ prefix: BodyPrefix, redaction: Configuration.Redaction, format: Configuration.Formatter.DataFormatterType) -> String {
        guard !prefix.isWhole else {
            return format(redaction.redactingBody(prefix.data, contentType: prefix.contentType))
        }
        let kept = completeFields(of: completeCharacters(of: prefix.data), contentType: prefix.contentType)
        let shown = format(redaction.redactingBody(kept, contentType: prefix.contentType))
        if prefix.isComplete {
            return "\(shown) [the first \(kept.count) of \(prefix.byteCount) bytes]"
        }
        return "\(shown) [the first \(kept.count) bytes; the body went on]"
    }

    /// `data` without an incomplete UTF-8 sequence at its end (a character cut by the limit).
    static func completeCharacters(of data: Data) -> Data {
        // A sequence's first byte says its length; look back at most 3 bytes for it.
        var index = data.endIndex
        var back = 0
        while index > data.startIndex, back < 4 {
            index -= 1
            back += 1
            let byte = data[index]
            if byte & 0xC0 == 0x80 { continue }  // a continuation byte
            let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return length > back ? data[data.startIndex..<index] : data
        }
        return data
    }

    /// The part of a cut body that holds complete fields only: a JSON body up to its last `,`,
    /// `{` or `[` outside a string, a form up to its last `&`; other bodies up to their last
    /// line break or space. What follows may be a value cut short.
    static func completeFields(of data: Data, contentType: String?) -> Data {
        let type = contentType?.lowercased() ?? ""
        let first = data.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        if type.contains("json") || first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
            var inString = false
            var escaped = false
            var end = data.startIndex
            for index in data.indices {
                let byte = data[index]
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: ","), UInt8(ascii: "{"), UInt8(ascii: "["): end = index + 1
                default: break
                }
            }
            return data[data.startIndex..<end]
        }
        let separators: Set<UInt8> =
            type.contains("x-www-form-urlencoded") ? [UInt8(ascii: "&")] : [0x0A, 0x0D, 0x20, 0x09, UInt8(ascii: "&"), UInt8(ascii: ",")]
        guard let last = data.lastIndex(where: { separators.contains($0) }) else { return Data() }
        return data[data.startIndex..<last]
    }
}
