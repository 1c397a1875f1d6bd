/// Tracks bracket depth through Swift source, skipping strings and comments.
struct DepthScanner {
    private(set) var depth = 0
    private var inBlockComment = 0
    private var inMultilineString = false

    /// Scans one line and updates the depth.
    mutating func scan(_ line: String) {
        let characters = Array(line)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let next: Character? = index + 1 < characters.count ? characters[index + 1] : nil
            if inBlockComment > 0 {
                if character == "*", next == "/" {
                    inBlockComment -= 1
                    index += 2
                    continue
                }
                if character == "/", next == "*" {
                    inBlockComment += 1
                    index += 2
                    continue
                }
                index += 1
                continue
            }
            if inMultilineString {
                if line[line.index(line.startIndex, offsetBy: index)...].hasPrefix("\"\"\"") {
                    inMultilineString = false
                    index += 3
                    continue
                }
                index += 1
                continue
            }
            if character == "/", next == "/" { return }
            if character == "/", next == "*" {
                inBlockComment += 1
                index += 2
                continue
            }
            if character == "\"" {
                if line[line.index(line.startIndex, offsetBy: index)...].hasPrefix("\"\"\"") {
                    inMultilineString = true
                    index += 3
                    continue
                }
                index = endOfString(characters, from: index + 1)
                continue
            }
            switch character {
            case "(", "[", "{": depth += 1
            case ")", "]", "}": depth -= 1
            default: break
            }
            index += 1
        }
    }

    /// The index after the quote that closes a one-line string literal, interpolations included.
    private func endOfString(_ characters: [Character], from start: Int) -> Int {
        var index = start
        while index < characters.count {
            let character = characters[index]
            if character == "\\" {
                if index + 1 < characters.count, characters[index + 1] == "(" {
                    var parentheses = 1
                    index += 2
                    while index < characters.count, parentheses > 0 {
                        if characters[index] == "\"" {
                            index = endOfString(characters, from: index + 1)
                            continue
                        }
                        if characters[index] == "(" { parentheses += 1 }
                        if characters[index] == ")" { parentheses -= 1 }
                        index += 1
                    }
                    continue
                }
                index += 2
                continue
            }
            if character == "\"" { return index + 1 }
            index += 1
        }
        return index
    }
}
