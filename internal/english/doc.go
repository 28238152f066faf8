// Package english writes counts and articles in messages: "1 step", "3 steps", "an llm step",
// "a review step". Every message that counts something or names a tool after an article uses
// it, so none says "1 steps" or "a llm step".
package english
