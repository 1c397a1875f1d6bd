import Foundation

/// A dotted key path into a JSON object, such as `"user.address.city"`.
///
/// This replaces Cocoa's key-value coding (`NSDictionary.value(forKeyPath:)`), which
/// swift-corelibs-foundation does not have. The path is split at `.` and each component is
/// looked up in turn:
/// - in a dictionary (`[String: Any]` or `NSDictionary`), the component is a key; a missing key
///   ends the walk with `nil`;
/// - in an array, the component is applied to every element, giving an array of the results
///   (elements without the key give `NSNull`), as KVC does on `NSArray`;
/// - in anything else (a string, number, `NSNull`), the walk ends with `nil`.
///
/// KVC collection operators such as `@count` are not supported: `@count` is looked up as an
/// ordinary key.
struct JSONKeyPath {
    /// The components of the path, in order.
    let components: [Substring]

    /// Creates a key path from its dotted form.
    ///
    /// - Parameter keyPath: The key path, components separated by `.`.
    init(_ keyPath: String) {
        self.components = keyPath.split(separator: ".", omittingEmptySubsequences: false)
    }

    /// Returns the value at this key path in `object`, or `nil` when the path does not lead
    /// anywhere.
    ///
    /// - Parameter object: A JSON object as returned by `JSONSerialization`.
    func value(in object: Any) -> Any? {
        var current: Any = object
        for component in self.components {
            guard let next = Self.lookUp(String(component), in: current) else {
                return nil
            }
            current = next
        }
        return current
    }

    /// Looks up one component in `object`, mapping over arrays.
    private static func lookUp(_ key: String, in object: Any) -> Any? {
        if let dictionary = object as? [String: Any] {
            return dictionary[key]
        }
        if let array = object as? [Any] {
            return array.map { element -> Any in
                Self.lookUp(key, in: element) ?? NSNull()
            }
        }
        return nil
    }
}
