import Foundation

extension DecodingError {
    /// The same error with its coding path starting at the top of a JSON body: the components
    /// of `keyPath` first, then the error's own path (which is relative to the value found at
    /// the key path).
    ///
    /// - Parameters:
    ///   - keyPath:        The dotted key path the decoded value was found at.
    ///   - replacingFirst: How many leading components of the error's path to drop (the
    ///                     wrapper key used to decode a scalar).
    /// - Returns: The error with the longer coding path; an error of an unknown kind unchanged.
    func prefixingCodingPath(with keyPath: String, replacingFirst dropped: Int = 0) -> DecodingError {
        let prefix: [any CodingKey] = JSONKeyPath(keyPath).components.map { KeyPathComponent(stringValue: String($0)) }
        func moved(_ context: Context) -> Context {
            Context(
                codingPath: prefix + context.codingPath.dropFirst(dropped),
                debugDescription: context.debugDescription,
                underlyingError: context.underlyingError)
        }
        switch self {
        case .typeMismatch(let type, let context):
            return .typeMismatch(type, moved(context))
        case .valueNotFound(let type, let context):
            return .valueNotFound(type, moved(context))
        case .keyNotFound(let key, let context):
            return .keyNotFound(key, moved(context))
        case .dataCorrupted(let context):
            return .dataCorrupted(moved(context))
        @unknown default:
            return self
        }
    }

    /// The error's coding path as text: `user.addresses[0].zip`, or "the top level" when empty.
    static func describe(_ codingPath: [any CodingKey]) -> String {
        guard !codingPath.isEmpty else { return "the top level" }
        var text = ""
        for key in codingPath {
            if let index = key.intValue, key.stringValue.hasPrefix("Index ") || key.stringValue == String(index) {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return "\"\(text)\""
    }

    /// One component of a key path, as a `CodingKey`.
    private struct KeyPathComponent: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }

        init(stringValue: String) {
            self.stringValue = stringValue
        }

        init?(intValue: Int) {
            return nil
        }
    }
}
