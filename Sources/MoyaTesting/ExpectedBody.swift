import Foundation

/// A request body a ``MockServer`` expectation compares with what arrived.
public enum ExpectedBody: Sendable {
    /// JSON equal to this text as a value: key order, spacing and number spelling do not matter.
    case json(String)
    /// Exactly this UTF-8 text.
    case text(String)
    /// Exactly these bytes.
    case bytes(Data)
    /// `application/x-www-form-urlencoded` fields with these values (other fields may exist).
    case form([String: String])
    /// No body at all.
    case empty

    /// The body encoded as JSON, compared as ``json(_:)``.
    ///
    /// - Throws: The encoder's error.
    public static func encoded<Value: Encodable>(_ value: Value, encoder: JSONEncoder = JSONEncoder()) throws -> ExpectedBody {
        let data = try encoder.encode(value)
        return .json(String(decoding: data, as: UTF8.self))
    }

    /// How `request`'s body differs from this one: an empty list when it does not.
    func differences(from request: MockRequest) -> [String] {
        switch self {
        case .empty:
            return request.bodyLength == 0 ? [] : ["body: expected none, got \(request.bodyLength) bytes"]
        case .bytes(let expected):
            return request.body == expected ? [] : ["body: expected \(expected.count) bytes, got \(request.bodyLength) different ones"]
        case .text(let expected):
            guard let text = request.bodyText else { return ["body: expected text \(quoted(expected)), got bytes that are not UTF-8"] }
            return text == expected ? [] : ["body: expected \(quoted(expected)), got \(quoted(text))"]
        case .form(let fields):
            let received = request.formFields
            return fields.sorted { $0.key < $1.key }.compactMap { name, value in
                guard let got = received.first(where: { $0.name == name }) else { return "form field \(name): expected \(quoted(value)), missing" }
                return got.value == value ? nil : "form field \(name): expected \(quoted(value)), got \(quoted(got.value))"
            }
        case .json(let expectedText):
            guard let expected = try? JSONSerialization.jsonObject(with: Data(expectedText.utf8), options: [.fragmentsAllowed]) else {
                return ["the expected JSON does not parse: \(expectedText)"]
            }
            guard let received = try? JSONSerialization.jsonObject(with: request.body, options: [.fragmentsAllowed]) else {
                return ["body: expected JSON, got \(request.bodyText.map(quoted) ?? "\(request.bodyLength) bytes that are not UTF-8")"]
            }
            return JSONDifference.between(expected: expected, received: received, at: "$")
        }
    }
}

/// Structural differences between two values from `JSONSerialization`, each with the path
/// where it is (`$.user.tags[1]`).
enum JSONDifference {
    static func between(expected: Any, received: Any, at path: String) -> [String] {
        switch (expected, received) {
        case (let expected as [String: Any], let received as [String: Any]):
            var differences: [String] = []
            for key in expected.keys.sorted() {
                guard let value = received[key] else {
                    differences.append("\(path).\(key): expected \(render(expected[key]!)), missing")
                    continue
                }
                differences += between(expected: expected[key]!, received: value, at: "\(path).\(key)")
            }
            for key in received.keys.sorted() where expected[key] == nil {
                differences.append("\(path).\(key): not expected, got \(render(received[key]!))")
            }
            return differences
        case (let expected as [Any], let received as [Any]):
            var differences: [String] = []
            if expected.count != received.count {
                differences.append("\(path): expected \(expected.count) elements, got \(received.count)")
            }
            for index in 0..<min(expected.count, received.count) {
                differences += between(expected: expected[index], received: received[index], at: "\(path)[\(index)]")
            }
            return differences
        default:
            return isEqual(expected, received) ? [] : ["\(path): expected \(render(expected)), got \(render(received))"]
        }
    }

    private static func isEqual(_ lhs: Any, _ rhs: Any) -> Bool {
        switch (lhs, rhs) {
        case (is NSNull, is NSNull):
            return true
        case (let lhs as String, let rhs as String):
            return lhs == rhs
        case (let lhs as NSNumber, let rhs as NSNumber):
            // JSONSerialization reads `true` and `1` as NSNumbers; tell booleans apart.
            let lhsIsBool = lhs.isBoolean
            let rhsIsBool = rhs.isBoolean
            return lhsIsBool == rhsIsBool && lhs == rhs
        default:
            return false
        }
    }

    static func render(_ value: Any) -> String {
        if value is NSNull { return "null" }
        if let string = value as? String { return quoted(string) }
        if let number = value as? NSNumber {
            return number.isBoolean ? (number.boolValue ? "true" : "false") : "\(number)"
        }
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) {
            return String(decoding: data, as: UTF8.self)
        }
        return "\(value)"
    }
}

/// `text` in double quotes, cut to 200 characters.
func quoted(_ text: String) -> String {
    let cut = text.count > 200 ? String(text.prefix(200)) + "…" : text
    return "\"\(cut)\""
}
