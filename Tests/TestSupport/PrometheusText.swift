import Foundation

/// A small parser of the Prometheus text format 0.0.4, strict enough to catch
/// what a scraper would reject: every sample belongs to a metric declared by
/// a `# TYPE` line before it, label values are well-quoted and escaped, values
/// parse as floats.
public struct PrometheusText {
    public struct Sample: Equatable {
        public let name: String
        public let labels: [String: String]
        public let value: Double

        public init(name: String, labels: [String: String], value: Double) {
            self.name = name
            self.labels = labels
            self.value = value
        }
    }

    public var types: [String: String] = [:]
    public var help: [String: String] = [:]
    public var samples: [Sample] = []

    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(_ text: String) throws {
        guard text.isEmpty || text.hasSuffix("\n") else { throw ParseError(description: "no final newline") }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let line = String(line)
            if line.hasPrefix("# HELP ") {
                let rest = line.dropFirst(7)
                guard let space = rest.firstIndex(of: " ") else { throw ParseError(description: "bad HELP: \(line)") }
                help[String(rest[..<space])] = String(rest[rest.index(after: space)...])
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[1]) else { throw ParseError(description: "bad TYPE: \(line)") }
                guard types[String(parts[0])] == nil else { throw ParseError(description: "TYPE twice: \(line)") }
                types[String(parts[0])] = String(parts[1])
            } else if line.hasPrefix("#") || line.isEmpty {
                continue
            } else {
                samples.append(try Self.sample(line))
                let name = samples.last!.name
                let family = types[name] != nil ? name : ["_bucket", "_sum", "_count"].compactMap { suffix in
                    name.hasSuffix(suffix) ? String(name.dropLast(suffix.count)) : nil
                }.first { types[$0] == "histogram" }
                guard family != nil else { throw ParseError(description: "sample without TYPE: \(line)") }
            }
        }
    }

    private static func sample(_ line: String) throws -> Sample {
        var index = line.startIndex
        while index < line.endIndex, line[index] != "{", line[index] != " " { index = line.index(after: index) }
        let name = String(line[..<index])
        var labels: [String: String] = [:]
        if index < line.endIndex, line[index] == "{" {
            index = line.index(after: index)
            while line[index] != "}" {
                guard let equals = line[index...].firstIndex(of: "=") else { throw ParseError(description: "bad label: \(line)") }
                let label = String(line[index..<equals])
                index = line.index(after: equals)
                guard line[index] == "\"" else { throw ParseError(description: "unquoted label value: \(line)") }
                index = line.index(after: index)
                var value = ""
                while line[index] != "\"" {
                    if line[index] == "\\" {
                        index = line.index(after: index)
                        switch line[index] {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw ParseError(description: "bad escape: \(line)")
                        }
                    } else {
                        value.append(line[index])
                    }
                    index = line.index(after: index)
                }
                guard labels[label] == nil else { throw ParseError(description: "label twice: \(line)") }
                labels[label] = value
                index = line.index(after: index)
                if line[index] == "," { index = line.index(after: index) }
            }
            index = line.index(after: index)
        }
        guard index < line.endIndex, line[index] == " " else { throw ParseError(description: "no value: \(line)") }
        let text = String(line[line.index(after: index)...])
        let value: Double? = switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
        guard let value else { throw ParseError(description: "bad value: \(line)") }
        return Sample(name: name, labels: labels, value: value)
    }

    public func values(_ name: String) -> [Sample] { samples.filter { $0.name == name } }
}
