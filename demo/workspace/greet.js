// Prints a greeting for the name given on the command line.
import { formatGreeting } from './lib/format.js'

const name = process.argv[2] ?? 'world'
console.log(formatGreeting(name))
