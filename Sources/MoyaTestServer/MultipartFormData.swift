import Foundation

/// A minimal `multipart/form-data` (RFC 7578 / RFC 2046) parser for fully buffered bodies.
struct MultipartFormData {
    /// One body part.
    struct Part {
        /// Part headers, names lowercased, in order.
        var headers: [(name: String, value: String)]
        /// The part's content.
        var body: [UInt8]

        /// The first header named `name` (lowercase).
        func header(_ name: String) -> String? {
            self.headers.first { $0.name == name }?.value
        }

        /// A parameter of the `Content-Disposition` header, e.g. `name` or `filename`.
        func dispositionParameter(_ parameter: String) -> String? {
            guard let disposition = self.header("content-disposition") else { return nil }
            return MultipartFormData.parameters(of: disposition)[parameter.lowercased()]
        }
    }

    /// Errors for bodies that cannot be parsed.
    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    /// The boundary the body was parsed with.
    var boundary: String
    /// The parts, in order.
    var parts: [Part]

    /// Extracts the `boundary` parameter of a `multipart/...` content type.
    static func boundary(fromContentType contentType: String?) throws -> String {
        guard let contentType else {
            throw ParseError(description: "missing Content-Type header")
        }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard let mediaType, mediaType.hasPrefix("multipart/") else {
            throw ParseError(description: "Content-Type is not multipart: \(contentType)")
        }
        guard let boundary = self.parameters(of: contentType)["boundary"], !boundary.isEmpty else {
            throw ParseError(description: "missing boundary parameter in Content-Type")
        }
        return boundary
    }

    /// Parses `body` using `boundary`.
    init(body: [UInt8], boundary: String) throws {
        self.boundary = boundary
        self.parts = []
        let delimiter = Array("--\(boundary)".utf8)
        let crlf: [UInt8] = [13, 10]

        // Skip the preamble: the first delimiter must start the body or follow a CRLF.
        guard var position = Self.find(delimiter, in: body, from: 0) else {
            throw ParseError(description: "boundary delimiter not found in body")
        }
        if position != 0 && !(position >= 2 && Array(body[(position - 2)..<position]) == crlf) {
            throw ParseError(description: "boundary delimiter not at line start")
        }
        position += delimiter.count

        while true {
            // After a delimiter: "--" marks the end, otherwise optional whitespace then CRLF.
            if Self.hasPrefix([45, 45], in: body, at: position) {
                return
            }
            while position < body.count && (body[position] == 32 || body[position] == 9) {
                position += 1
            }
            guard Self.hasPrefix(crlf, in: body, at: position) else {
                throw ParseError(description: "expected CRLF after boundary delimiter")
            }
            position += 2

            // Headers end at an empty line.
            var headers: [(name: String, value: String)] = []
            if Self.hasPrefix(crlf, in: body, at: position) {
                position += 2
            } else {
                guard let headerEnd = Self.find([13, 10, 13, 10], in: body, from: position) else {
                    throw ParseError(description: "unterminated part headers")
                }
                guard let headerText = String(bytes: body[position..<headerEnd], encoding: .utf8) else {
                    throw ParseError(description: "part headers are not valid UTF-8")
                }
                for line in headerText.components(separatedBy: "\r\n") {
                    guard let colon = line.firstIndex(of: ":") else {
                        throw ParseError(description: "invalid part header line: \(line)")
                    }
                    let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    guard !name.isEmpty else {
                        throw ParseError(description: "empty part header name")
                    }
                    headers.append((name, value))
                }
                position = headerEnd + 4
            }

            // The content runs until CRLF followed by the next delimiter.
            guard let next = Self.find(crlf + delimiter, in: body, from: position) else {
                throw ParseError(description: "missing closing boundary delimiter")
            }
            self.parts.append(Part(headers: headers, body: Array(body[position..<next])))
            position = next + 2 + delimiter.count
        }
    }

    /// Parses `type/subtype; key=value; key="quoted value"` into lowercased keys and unquoted values.
    static func parameters(of headerValue: String) -> [String: String] {
        var result: [String: String] = [:]
        var segments: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in headerValue {
            if escaped {
                current.append(character)
                escaped = false
            } else if inQuotes && character == "\\" {
                current.append(character)
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
                current.append(character)
            } else if character == ";" && !inQuotes {
                segments.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        segments.append(current)

        for segment in segments.dropFirst() {
            guard let equals = segment.firstIndex(of: "=") else { continue }
            let key = segment[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var value = segment[segment.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
                    .replacingOccurrences(of: "\\\"", with: "\"")
                    .replacingOccurrences(of: "\\\\", with: "\\")
            }
            if result[key] == nil {
                result[key] = value
            }
        }
        return result
    }

    private static func hasPrefix(_ needle: [UInt8], in haystack: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset + needle.count <= haystack.count else { return false }
        for index in 0..<needle.count where haystack[offset + index] != needle[index] {
            return false
        }
        return true
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else {
            return nil
        }
        for offset in start...(haystack.count - needle.count) where self.hasPrefix(needle, in: haystack, at: offset) {
            return offset
        }
        return nil
    }
}
