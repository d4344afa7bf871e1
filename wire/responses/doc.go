// Package responses is the OpenAI Responses API wire as harnessflow serves
// it to clients: the writer of the event stream ([Writer], the inverse of
// the decoder in stages/responsesstream) and the Response object it carries
// (the same object a non-streaming request gets as its JSON body).
//
// A [Writer] turns the engine's ResponseEvents into the events the
// Responses API emits, in the order it emits them:
//
//	response.created, response.in_progress
//	per item, one item at a time:
//	  response.output_item.added
//	  message:          response.content_part.added, response.output_text.delta*,
//	                    response.output_text.done, response.content_part.done
//	  reasoning:        per summary part: response.reasoning_summary_part.added,
//	                    response.reasoning_summary_text.delta*, .done, response.reasoning_summary_part.done
//	                    per content part: response.content_part.added,
//	                    response.reasoning_text.delta*, .done, response.content_part.done
//	  function_call:    response.function_call_arguments.delta*, .done
//	  custom_tool_call: response.custom_tool_call_input.delta*, .done
//	  response.output_item.done
//	response.completed | response.incomplete | response.failed
//
// The engine's events may interleave items (a chat stream's reasoning is
// still open when its text starts); a client may not see that: an item is
// closed, with what its deltas brought, before the next one opens. Every
// item id is unique within the response and across responses (see
// [Options.KeepItemIDs]), so a client can refer to items later
// (item_reference).
//
// The Response object has every field the API documents, with the
// request's parameters echoed (instructions, tools, tool_choice,
// parallel_tool_calls, temperature, top_p, metadata, …), null where the
// client set none and the API reports null, and usage null until the
// response completes.
package responses
