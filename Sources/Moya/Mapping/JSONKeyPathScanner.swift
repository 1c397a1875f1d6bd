import Foundation

/// Finds the value at a dotted key path in a JSON body in one pass over its bytes, without
/// building the values it passes over.
///
/// ``Response/map(_:atKeyPath:using:failsOnEmptyData:)`` used to parse the whole body with
/// `JSONSerialization`, walk the key path through the objects it built, write the value found
/// back to JSON and decode that: three parses of the value. This scanner checks the whole body
/// and gives the byte range of the value at the key path, which is then handed to the
/// `JSONDecoder` as it is.
///
/// The answer must be the one the `JSONSerialization` path would give, so the scanner accepts
/// only what swift-corelibs-foundation's `JSONSerialization` accepts, and whenever the
/// `JSONSerialization` path could give a different answer it returns `.unsupported`, and the
/// caller takes that path instead. Such bodies are those that are not valid JSON (the error
/// must carry `JSONSerialization`'s message), and valid ones that are rare in practice:
/// - a byte order mark inside a string (`JSONSerialization` drops one at the start of a string
///   and after each escape sequence);
/// - numbers `JSONSerialization` may refuse or round: more than 38 digits, or an exponent
///   beyond ±250;
/// - more than 512 nested arrays and objects (`JSONSerialization` refuses them);
/// - a key path that runs through an array (it then maps over the elements, as key-value
///   coding does; see ``JSONKeyPath``);
/// - an object inside the value found with two keys that Swift considers equal:
///   `JSONSerialization` keeps the last, `JSONDecoder` the first.
///
/// Keys are compared as Swift compares strings (canonical equivalence), as a dictionary lookup
/// does: a key written with escapes (`"caf\u00e9"`) or in another normalization form matches.
/// When an object on the key path holds the key more than once, the last one counts, as in
/// `JSONSerialization`'s dictionaries. The nesting depth is bounded, and the scanner does not
/// recurse, so hostile input cannot exhaust the stack.
struct JSONKeyPathScanner {
    /// What kind of JSON value a key path leads to.
    enum ValueKind: Equatable, Sendable {
        /// `{…}`.
        case object
        /// `[…]`.
        case array
        /// `"…"`.
        case string
        /// A number.
        case number
        /// `true` or `false`.
        case boolean
        /// `null`.
        case null
    }

    /// What the scanner found.
    enum Outcome: Equatable, Sendable {
        /// The value at the key path: its bytes (offsets from the start of the body) and kind.
        case found(Range<Int>, ValueKind)
        /// The body is a JSON object, but the key path leads nowhere in it.
        case notFound
        /// The body is JSON, but not an object.
        case notADictionary
        /// The scanner leaves this body to `JSONSerialization` (see the type's description).
        case unsupported
    }

    /// The deepest nesting of arrays and objects that `JSONSerialization` accepts.
    static let maximumDepth = 512

    /// Looks for the value at `keyPath` in the JSON `body`.
    ///
    /// - Parameters:
    ///   - keyPath: The key path.
    ///   - body:    The body's bytes.
    /// - Returns: What was found; offsets count from the first byte of `body`.
    static func lookUp(_ keyPath: JSONKeyPath, in body: UnsafeRawBufferPointer) -> Outcome {
        guard let base = body.baseAddress, !body.isEmpty else {
            return .unsupported
        }
        var scanner = JSONKeyPathScanner(
            bytes: base.assumingMemoryBound(to: UInt8.self),
            count: body.count,
            components: keyPath.components.map(Component.init)
        )
        return scanner.scan()
    }

    /// Decodes the JSON string whose bytes (after the opening quote, before the closing one) are
    /// `contents`. The string must have been accepted by the scanner.
    ///
    /// - Parameter contents: The string's bytes between the quotes.
    /// - Returns: The string, escape sequences resolved.
    static func decodeString(_ contents: UnsafeRawBufferPointer) -> String {
        let bytes = contents.assumingMemoryBound(to: UInt8.self)
        guard bytes.contains(Byte.backslash) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == Byte.backslash, index + 1 < bytes.count else {
                output.append(byte)
                index += 1
                continue
            }
            let escaped = bytes[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                var value = UInt32(hexValue(bytes, at: index) ?? 0xFFFD)
                index += 4
                if (0xD800...0xDBFF).contains(value), index + 6 <= bytes.count,
                    bytes[index] == Byte.backslash, bytes[index + 1] == UInt8(ascii: "u"),
                    let low = hexValue(bytes, at: index + 2), (0xDC00...0xDFFF).contains(low)
                {
                    value = 0x10000 + ((value - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    index += 6
                }
                output.append(contentsOf: String(Unicode.Scalar(value) ?? "\u{FFFD}").utf8)
            default:
                // `"`, `\` and `/` stand for themselves.
                output.append(escaped)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    // MARK: - Scanning

    /// One component of the key path, ready to compare with keys.
    private struct Component {
        /// The component.
        let string: String
        /// Its UTF-8 bytes.
        let utf8: [UInt8]
        /// Whether it is all ASCII, so that it can only equal a key with the same bytes.
        let isASCII: Bool

        /// Prepares `component` for comparisons.
        init(_ component: Substring) {
            self.string = String(component)
            self.utf8 = Array(component.utf8)
            self.isASCII = self.utf8.allSatisfy { $0 < 0x80 }
        }
    }

    /// What an array or object being read is to the key path.
    private enum Role {
        /// Outside the key path and outside the value found.
        case plain
        /// An object whose keys are compared with the key path's component at its depth.
        case onPath
        /// The value at the key path.
        case target
        /// Inside the value at the key path.
        case inTarget
    }

    /// An array or object that is open at the current position.
    private struct Frame {
        /// Whether it is an object (else an array).
        let isObject: Bool
        /// What it is to the key path.
        let role: Role
        /// The offset of its opening bracket.
        let start: Int
        /// Where its keys start in `keys` (objects in the value found only).
        let firstKey: Int
        /// Whether one of its keys has escapes or non-ASCII bytes, so that keys must be compared
        /// as Swift strings to find duplicates.
        var hasComplexKeys = false
    }

    /// A key of an object in the value found, kept to look for duplicates.
    private struct Key {
        /// The offset of its first byte after the opening quote.
        let start: Int
        /// The number of bytes between the quotes.
        let count: Int
        /// A hash of those bytes.
        let hash: UInt64
    }

    /// ASCII bytes the scanner looks for.
    private enum Byte {
        /// `"`.
        static let quote = UInt8(ascii: "\"")
        /// `\`.
        static let backslash = UInt8(ascii: "\\")
        /// `:`.
        static let colon = UInt8(ascii: ":")
        /// `,`.
        static let comma = UInt8(ascii: ",")
        /// `{`.
        static let openBrace = UInt8(ascii: "{")
        /// `}`.
        static let closeBrace = UInt8(ascii: "}")
        /// `[`.
        static let openBracket = UInt8(ascii: "[")
        /// `]`.
        static let closeBracket = UInt8(ascii: "]")
        /// `-`.
        static let minus = UInt8(ascii: "-")
        /// `+`.
        static let plus = UInt8(ascii: "+")
        /// `.`.
        static let dot = UInt8(ascii: ".")
        /// `0`.
        static let zero = UInt8(ascii: "0")
        /// `9`.
        static let nine = UInt8(ascii: "9")
    }

    /// The body.
    private let bytes: UnsafePointer<UInt8>
    /// The number of bytes in the body.
    private let count: Int
    /// The key path.
    private let components: [Component]
    /// The arrays and objects open at the current position, outermost first.
    private var stack: [Frame] = []
    /// The keys of the objects open inside the value found, for the duplicate check.
    private var keys: [Key] = []
    /// The answer so far.
    private var outcome: Outcome = .notFound

    /// Creates a scanner of `count` bytes at `bytes`.
    private init(bytes: UnsafePointer<UInt8>, count: Int, components: [Component]) {
        self.bytes = bytes
        self.count = count
        self.components = components
        self.stack.reserveCapacity(16)
    }

    /// Reads the whole body; returns the outcome, or `.unsupported` at the first thing the
    /// scanner leaves to `JSONSerialization`.
    private mutating func scan() -> Outcome {
        var index = 0
        // A UTF-8 byte order mark, which JSONSerialization skips.
        if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            index = 3
        }
        // The role of the value about to be read.
        var role = Role.onPath
        var expectingValue = true
        while true {
            index = skipWhitespace(from: index)
            guard index < count else { return .unsupported }
            let byte = bytes[index]
            if expectingValue {
                if stack.isEmpty, byte != Byte.openBrace {
                    outcome = .notADictionary
                    role = .plain
                }
                switch byte {
                case Byte.openBrace, Byte.openBracket:
                    guard stack.count < Self.maximumDepth else { return .unsupported }
                    let isObject = byte == Byte.openBrace
                    if role == .onPath, !isObject {
                        // Through an array, the key path maps over the elements.
                        outcome = .unsupported
                        role = .plain
                    }
                    stack.append(Frame(isObject: isObject, role: role, start: index, firstKey: keys.count))
                    index = skipWhitespace(from: index + 1)
                    guard index < count else { return .unsupported }
                    if bytes[index] == (isObject ? Byte.closeBrace : Byte.closeBracket) {
                        guard closeContainer(endingAt: index + 1) else { return .unsupported }
                        index += 1
                        expectingValue = false
                    } else if isObject {
                        guard let next = readKey(at: index, role: &role) else { return .unsupported }
                        index = next
                    } else {
                        role = Self.elementRole(in: role)
                    }
                case Byte.quote:
                    guard let end = scanString(at: index)?.end else { return .unsupported }
                    found(role, start: index, end: end, kind: .string)
                    index = end
                    expectingValue = false
                case Byte.minus, Byte.zero...Byte.nine:
                    guard let end = scanNumber(at: index) else { return .unsupported }
                    found(role, start: index, end: end, kind: .number)
                    index = end
                    expectingValue = false
                case UInt8(ascii: "t"):
                    guard matches("true", at: index) else { return .unsupported }
                    found(role, start: index, end: index + 4, kind: .boolean)
                    index += 4
                    expectingValue = false
                case UInt8(ascii: "f"):
                    guard matches("false", at: index) else { return .unsupported }
                    found(role, start: index, end: index + 5, kind: .boolean)
                    index += 5
                    expectingValue = false
                case UInt8(ascii: "n"):
                    guard matches("null", at: index) else { return .unsupported }
                    found(role, start: index, end: index + 4, kind: .null)
                    index += 4
                    expectingValue = false
                default:
                    return .unsupported
                }
                if stack.isEmpty, !expectingValue {
                    // The top-level value is complete: only whitespace may follow.
                    return skipWhitespace(from: index) == count ? outcome : .unsupported
                }
                continue
            }

            // After a value inside an array or object: a comma or the closing bracket.
            guard let frame = stack.last else { return .unsupported }
            let closing = frame.isObject ? Byte.closeBrace : Byte.closeBracket
            if byte == Byte.comma {
                index = skipWhitespace(from: index + 1)
                guard index < count else { return .unsupported }
                // JSONSerialization accepts one trailing comma: `[1,]`, `{"a":1,}`.
                if bytes[index] != closing {
                    role = frame.role
                    if frame.isObject {
                        guard let next = readKey(at: index, role: &role) else { return .unsupported }
                        index = next
                    } else {
                        role = Self.elementRole(in: role)
                    }
                    expectingValue = true
                    continue
                }
            } else if byte != closing {
                return .unsupported
            }
            guard closeContainer(endingAt: index + 1) else { return .unsupported }
            index += 1
            if stack.isEmpty {
                return skipWhitespace(from: index) == count ? outcome : .unsupported
            }
        }
    }

    /// The role of an element of an array with the role `role`.
    private static func elementRole(in role: Role) -> Role {
        switch role {
        case .target, .inTarget: return .inTarget
        case .plain, .onPath: return .plain
        }
    }

    /// Notes a scalar value read at `start..<end` if it is the value at the key path.
    private mutating func found(_ role: Role, start: Int, end: Int, kind: ValueKind) {
        if role == .target {
            outcome = .found(start..<end, kind)
        }
    }

    /// Closes the innermost open array or object, whose closing bracket ends before `end`: checks
    /// its keys for duplicates if it is inside the value found, and notes it if it is that
    /// value. Returns `false` when the body must be left to `JSONSerialization`.
    private mutating func closeContainer(endingAt end: Int) -> Bool {
        guard let frame = stack.popLast() else { return false }
        if frame.isObject, frame.role == .target || frame.role == .inTarget {
            guard !hasDuplicateKeys(frame) else { return false }
            keys.removeSubrange(frame.firstKey...)
        }
        if frame.role == .target {
            outcome = .found(frame.start..<end, frame.isObject ? .object : .array)
        }
        return true
    }

    /// Reads an object's key, the colon after it and the whitespace before its value. On entry
    /// `role` is the object's role; on return it is the role of the member's value.
    ///
    /// - Returns: The offset of the member's value, or `nil` when the body must be left to
    ///   `JSONSerialization`.
    private mutating func readKey(at index: Int, role: inout Role) -> Int? {
        guard bytes[index] == Byte.quote, let (end, isSimple) = scanString(at: index) else {
            return nil
        }
        let keyStart = index + 1
        let keyCount = end - 1 - keyStart
        switch role {
        case .onPath:
            let depth = stack.count - 1
            if depth < components.count, keyMatches(components[depth], start: keyStart, count: keyCount, isSimple: isSimple) {
                // A later duplicate of the key replaces an earlier one, as in a dictionary.
                outcome = .notFound
                role = depth + 1 == components.count ? .target : .onPath
            } else {
                role = .plain
            }
        case .target, .inTarget:
            keys.append(Key(start: keyStart, count: keyCount, hash: isSimple ? hash(start: keyStart, count: keyCount) : 0))
            if !isSimple {
                stack[stack.count - 1].hasComplexKeys = true
            }
            role = .inTarget
        case .plain:
            break
        }
        let colon = skipWhitespace(from: end)
        guard colon < count, bytes[colon] == Byte.colon else { return nil }
        return colon + 1
    }

    /// Whether the key at `start` (`count` bytes between its quotes) is `component`.
    private func keyMatches(_ component: Component, start: Int, count: Int, isSimple: Bool) -> Bool {
        if isSimple, component.isASCII {
            return component.utf8.elementsEqual(UnsafeBufferPointer(start: bytes + start, count: count))
        }
        // Escapes, or characters outside ASCII: compared as Swift strings, so that canonically
        // equivalent keys match as they would in a dictionary.
        return Self.decodeString(UnsafeRawBufferPointer(start: bytes + start, count: count)) == component.string
    }

    /// Whether two keys of `frame`, an object that just closed, are equal as Swift strings.
    private func hasDuplicateKeys(_ frame: Frame) -> Bool {
        let own = keys[frame.firstKey...]
        guard own.count > 1 else { return false }
        if frame.hasComplexKeys {
            var seen = Set<String>()
            for key in own {
                let string = Self.decodeString(UnsafeRawBufferPointer(start: bytes + key.start, count: key.count))
                guard seen.insert(string).inserted else { return true }
            }
            return false
        }
        if own.count <= 16 {
            var index = own.startIndex
            while index < own.endIndex {
                var other = own.index(after: index)
                while other < own.endIndex {
                    if own[index].hash == own[other].hash, sameBytes(own[index], own[other]) {
                        return true
                    }
                    other += 1
                }
                index += 1
            }
            return false
        }
        let sorted = own.sorted { $0.hash < $1.hash }
        for (first, second) in zip(sorted, sorted.dropFirst()) where first.hash == second.hash && sameBytes(first, second) {
            return true
        }
        return false
    }

    /// Whether two keys have the same bytes.
    private func sameBytes(_ first: Key, _ second: Key) -> Bool {
        first.count == second.count && memcmp(bytes + first.start, bytes + second.start, first.count) == 0
    }

    /// An FNV-1a hash of `count` bytes at `start`.
    private func hash(start: Int, count: Int) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for offset in start..<(start + count) {
            hash = (hash ^ UInt64(bytes[offset])) &* 0x100_0000_01B3
        }
        return hash
    }

    /// The offset of the first byte from `index` on that is not JSON whitespace.
    @inline(__always)
    private func skipWhitespace(from index: Int) -> Int {
        var index = index
        while index < count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return index
            }
        }
        return index
    }

    /// Whether the ASCII `literal` is at `index`.
    private func matches(_ literal: StaticString, at index: Int) -> Bool {
        let length = literal.utf8CodeUnitCount
        return index + length <= count && memcmp(literal.utf8Start, bytes + index, length) == 0
    }

    /// Reads the string whose opening quote is at `index`.
    ///
    /// - Returns: The offset after its closing quote, and whether it is simple (ASCII without
    ///   escapes); `nil` when `JSONSerialization` would refuse it (an unescaped control
    ///   character, a bad escape, a lone surrogate, bytes that are not UTF-8) or could change it
    ///   (a byte order mark).
    private func scanString(at index: Int) -> (end: Int, isSimple: Bool)? {
        var index = index + 1
        var isSimple = true
        while index < count {
            let byte = bytes[index]
            if byte >= 0x20, byte < 0x80, byte != Byte.quote, byte != Byte.backslash {
                index += 1
                continue
            }
            if byte == Byte.quote {
                return (index + 1, isSimple)
            }
            isSimple = false
            if byte == Byte.backslash {
                guard let next = scanEscape(at: index) else { return nil }
                index = next
            } else if byte >= 0x80 {
                guard let next = scanUTF8Sequence(at: index) else { return nil }
                index = next
            } else {
                // A control character must be escaped.
                return nil
            }
        }
        return nil
    }

    /// Reads the escape sequence at `index` (its backslash); returns the offset after it.
    private func scanEscape(at index: Int) -> Int? {
        guard index + 1 < count else { return nil }
        switch bytes[index + 1] {
        case Byte.quote, Byte.backslash, UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return index + 2
        case UInt8(ascii: "u"):
            guard let value = hexValue(at: index + 2) else { return nil }
            switch value {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed by an escaped low one.
                guard index + 12 <= count, bytes[index + 6] == Byte.backslash, bytes[index + 7] == UInt8(ascii: "u"),
                    let low = hexValue(at: index + 8), (0xDC00...0xDFFF).contains(low)
                else {
                    return nil
                }
                return index + 12
            case 0xDC00...0xDFFF:
                return nil
            default:
                return index + 6
            }
        default:
            return nil
        }
    }

    /// The value of the four hexadecimal digits at `index`.
    private func hexValue(at index: Int) -> UInt16? {
        guard index + 4 <= count else { return nil }
        return Self.hexValue(UnsafeBufferPointer(start: bytes, count: count), at: index)
    }

    /// The value of the four hexadecimal digits at `index` in `buffer`.
    private static func hexValue(_ buffer: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt16? {
        guard index >= 0, index + 4 <= buffer.count else { return nil }
        var value: UInt16 = 0
        for offset in index..<(index + 4) {
            let byte = buffer[offset]
            let digit: UInt8
            switch byte {
            case Byte.zero...Byte.nine: digit = byte - Byte.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// Reads the UTF-8 sequence of a scalar beyond ASCII at `index`; returns the offset after it.
    /// Overlong forms, surrogates, values beyond U+10FFFF and the byte order mark U+FEFF give
    /// `nil`.
    private func scanUTF8Sequence(at index: Int) -> Int? {
        let lead = bytes[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: return nil
        }
        guard index + length <= count else { return nil }
        let second = bytes[index + 1]
        guard second >= low, second <= high else { return nil }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 {
            return nil
        }
        if lead == 0xEF, second == 0xBB, bytes[index + 2] == 0xBF {
            // U+FEFF, which JSONSerialization drops at the start of a string.
            return nil
        }
        return index + length
    }

    /// Reads the number at `index`; returns the offset after it, or `nil` when it is malformed
    /// or `JSONSerialization` might refuse or change it (more than 38 digits, an exponent beyond
    /// ±250, and `-0`, which it reads as the integer 0, so that a `Double` loses its sign).
    private func scanNumber(at index: Int) -> Int? {
        let start = index
        var index = index
        if bytes[index] == Byte.minus {
            index += 1
        }
        guard index < count else { return nil }
        let integerStart = index
        if bytes[index] == Byte.zero {
            index += 1
        } else {
            index = skipDigits(from: index)
            guard index > integerStart else { return nil }
        }
        var digits = index - integerStart
        if index == start + 2, bytes[start] == Byte.minus, bytes[start + 1] == Byte.zero,
            index == count || (bytes[index] != Byte.dot && bytes[index] != UInt8(ascii: "e") && bytes[index] != UInt8(ascii: "E"))
        {
            return nil
        }
        if index < count, bytes[index] == Byte.dot {
            let fractionStart = index + 1
            index = skipDigits(from: fractionStart)
            guard index > fractionStart else { return nil }
            digits += index - fractionStart
        }
        guard digits <= 38 else { return nil }
        if index < count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < count, bytes[index] == Byte.plus || bytes[index] == Byte.minus {
                index += 1
            }
            let exponentStart = index
            index = skipDigits(from: exponentStart)
            guard index > exponentStart, index - exponentStart <= 3 else { return nil }
            var exponent = 0
            for offset in exponentStart..<index {
                exponent = exponent * 10 + Int(bytes[offset] - Byte.zero)
            }
            guard exponent <= 250 else { return nil }
        }
        return index
    }

    /// The offset of the first byte from `index` on that is not a decimal digit.
    @inline(__always)
    private func skipDigits(from index: Int) -> Int {
        var index = index
        while index < count, bytes[index] >= Byte.zero, bytes[index] <= Byte.nine {
            index += 1
        }
        return index
    }
}
