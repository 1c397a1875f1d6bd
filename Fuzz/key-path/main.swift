import Foundation

// Fuzz target for JSONKeyPathScanner (Sources/Moya/Mapping), against JSONSerialization.
//
// Input: a key path, a line feed, then the JSON body; the key path is decoded as UTF-8. Without a
// line feed the whole input is the body and the key path is `data`.
//
// Properties, whenever the scanner answers (does not return `.unsupported`):
// - JSONSerialization accepts the body (with `.fragmentsAllowed`, as `Response.mapJSON` reads it);
// - `.notADictionary` exactly when the body is not a JSON object;
// - `.notFound` exactly when walking the key path through JSONSerialization's objects
//   (`JSONKeyPath.value(in:)`) finds nothing;
// - `.found(range, kind)`: the range is inside the body, its bytes parse to the value the walk
//   finds (compared value by value, see `sameJSON`), `kind` is that value's kind, and for a
//   string `JSONKeyPathScanner.decodeString` gives JSONSerialization's string.
// The scanner must also answer the same when the body is preceded by a UTF-8 byte order mark.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = inputBytes(data, size)
    let keyPath: String
    let body: [UInt8]
    if let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
        keyPath = String(decoding: input[..<newline], as: UTF8.self)
        body = Array(input[(newline + 1)...])
    } else {
        keyPath = "data"
        body = input
    }
    let path = JSONKeyPath(keyPath)
    let outcome = body.withUnsafeBytes { JSONKeyPathScanner.lookUp(path, in: $0) }
    check(outcome, body: body, keyPath: keyPath)

    let marked = [0xEF, 0xBB, 0xBF] + body
    let markedOutcome = marked.withUnsafeBytes { JSONKeyPathScanner.lookUp(path, in: $0) }
    if !body.starts(with: [0xEF, 0xBB, 0xBF]) {
        let shifted: JSONKeyPathScanner.Outcome
        switch outcome {
        case .found(let range, let kind): shifted = .found((range.lowerBound + 3)..<(range.upperBound + 3), kind)
        default: shifted = outcome
        }
        require(markedOutcome == shifted, "with a byte order mark, \(markedOutcome) instead of \(shifted) for \(keyPath.debugDescription) in \(show(body))")
    }
    return 0
}

/// Checks the scanner's answer against JSONSerialization.
private func check(_ outcome: JSONKeyPathScanner.Outcome, body: [UInt8], keyPath: String) {
    guard outcome != .unsupported else { return }
    let context = "\(outcome) for \(keyPath.debugDescription) in \(show(body))"
    let json: Any
    do {
        json = try JSONSerialization.jsonObject(with: Data(body), options: .fragmentsAllowed)
    } catch {
        require(false, "JSONSerialization refuses what the scanner accepted (\(error)): \(context)")
        return
    }
    let dictionary = json as? [String: Any]
    let walked = dictionary.flatMap { JSONKeyPath(keyPath).value(in: $0) }
    switch outcome {
    case .notADictionary:
        require(dictionary == nil, "a JSON object: \(context)")
    case .notFound:
        require(dictionary != nil && walked == nil, "the walk finds \(String(describing: walked)): \(context)")
    case .found(let range, let kind):
        require(range.lowerBound >= 0 && range.upperBound <= body.count && !range.isEmpty, "range out of the body: \(context)")
        guard let walked else {
            require(false, "the walk finds nothing: \(context)")
            return
        }
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: Data(body[range]), options: .fragmentsAllowed)
        } catch {
            require(false, "the bytes found do not parse (\(error)): \(context)")
            return
        }
        require(sameJSON(value, walked), "the bytes found are \(value), the walk finds \(walked): \(context)")
        require(kind == kindOf(walked), "kind \(kind) for \(walked): \(context)")
        if kind == .string, let string = walked as? String {
            let decoded = body.withUnsafeBytes { bytes in
                JSONKeyPathScanner.decodeString(UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]))
            }
            require(Array(decoded.utf8) == Array(string.utf8), "decodeString gives \(decoded.debugDescription), not \(string.debugDescription): \(context)")
        }
    case .unsupported:
        break
    }
}

/// Whether two values JSONSerialization made are the same JSON value: same kind, same strings and
/// numbers, same members. Not by writing both with `.sortedKeys` and comparing the bytes: on Linux
/// that option does not always put the keys in order, and two equal objects (one parsed from the
/// whole body, one from the bytes found) were written with two keys in opposite orders.
private func sameJSON(_ a: Any, _ b: Any) -> Bool {
    guard let kind = kindOf(a), kind == kindOf(b) else { return false }
    switch kind {
    case .object:
        guard let a = a as? [String: Any], let b = b as? [String: Any], a.count == b.count else { return false }
        return a.allSatisfy { key, value in b[key].map { sameJSON(value, $0) } ?? false }
    case .array:
        guard let a = a as? [Any], let b = b as? [Any], a.count == b.count else { return false }
        return zip(a, b).allSatisfy { sameJSON($0, $1) }
    case .string:
        return (a as? String).map { Array($0.utf8) } == (b as? String).map { Array($0.utf8) }
    case .null:
        return true
    case .number, .boolean:
        guard let a = a as? NSNumber, let b = b as? NSNumber else { return false }
        return a.isEqual(b)
    }
}

/// The kind of a value JSONSerialization made.
private func kindOf(_ value: Any) -> JSONKeyPathScanner.ValueKind? {
    switch value {
    case is [String: Any]: return .object
    case is [Any]: return .array
    case is String: return .string
    case is NSNull: return .null
    case let number as NSNumber:
        // Foundation on Linux gives every boolean as one of two shared instances.
        return number === NSNumber(value: true) || number === NSNumber(value: false) ? .boolean : .number
    default: return nil
    }
}
